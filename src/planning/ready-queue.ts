/**
 * The subtasks ready to start, smallest topological position first: a binary min-heap, so a plan of 10,000
 * independent subtasks is scheduled in O(n log n) rather than by rescanning the plan after every completion.
 */

export class ReadyQueue {
  private readonly heap: Array<[number, string]> = []

  get size(): number {
    return this.heap.length
  }

  push(position: number, id: string): void {
    const h = this.heap
    h.push([position, id])
    for (let i = h.length - 1; i > 0; ) {
      const parent = (i - 1) >> 1
      if (h[parent]![0] <= h[i]![0]) break
      ;[h[parent], h[i]] = [h[i]!, h[parent]!]
      i = parent
    }
  }

  pop(): string | undefined {
    const h = this.heap
    const top = h[0]
    const last = h.pop()
    if (top === undefined || last === undefined) return undefined
    if (h.length > 0) {
      h[0] = last
      for (let i = 0; ; ) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < h.length && h[l]![0] < h[m]![0]) m = l
        if (r < h.length && h[r]![0] < h[m]![0]) m = r
        if (m === i) break
        ;[h[m], h[i]] = [h[i]!, h[m]!]
        i = m
      }
    }
    return top[1]
  }
}
