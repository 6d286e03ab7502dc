// Build-time feature flags, replaced by esbuild `define` from targets/<name>.json (see build.mjs). When running
// from source (tests, tsx) they are undefined and src/feature-list.ts treats every feature as on. Only that list reads them.
declare const __FEATURE_PLANNING__: boolean | undefined
declare const __FEATURE_REASONING__: boolean | undefined
declare const __FEATURE_PROLOG__: boolean | undefined
declare const __FEATURE_LUA__: boolean | undefined
declare const __FEATURE_PYTHON__: boolean | undefined
/** The fleet feature: the NATS task store (`--nats`). */
declare const __FEATURE_FLEET__: boolean | undefined
/** The llama feature: GGUF models run in the process by llama.cpp (`model: gguf:<file>`). */
declare const __FEATURE_LLAMA__: boolean | undefined
/** The files a build with the llama feature carries in `llama/`, `llama.cjs` first (scripts/build/llama.mjs). */
declare const __TEA_LLAMA_FILES__: readonly string[] | undefined
declare const __TEA_TARGET__: string | undefined
/** The target's enabled feature flags, by name (the same target file as the __FEATURE_*__ flags). */
declare const __TEA_FEATURES__: readonly string[] | undefined
/** Which targets have each feature, by feature (targets/*.json): src/feature-list.ts targetsWith. */
declare const __TEA_FEATURE_TARGETS__: Readonly<Record<string, readonly string[]>> | undefined
declare const __TEA_VERSION__: string | undefined
/** The build's hash of the program a bundle carries (src/sea/loader.ts names its code cache by it). */
declare const __TEA_PROGRAM_HASH__: string | undefined
