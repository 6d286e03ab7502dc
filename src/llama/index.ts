/**
 * The llama feature's entry (src/feature-list.ts): GGUF models run in the tea process by llama.cpp. The GGUF
 * provider itself is the LLM client's (src/llm/gguf/); what this feature adds to a build is node-llama-cpp and the
 * prebuilt addon of the target's arch, carried in `llama/` (scripts/build/llama.mjs, src/sea/llama-runtime.ts). A
 * build without it has neither, and its `gguf:` models fail with a coded error naming the builds that have it
 * (scripts/build/plugins.mjs, `llamaPlugin`). `tea doctor` loads the addon through here, and reads a GGUF file's
 * header with ggufReport (the check of each model an agent names).
 */
export { loadLlama } from '../llm/gguf/addon.ts'
export { ggufReport } from '../llm/gguf/report.ts'
