/** A seeded pseudo-random generator (a 32-bit LCG) for fuzz tests: the same seed gives the same cases. */
export function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}
