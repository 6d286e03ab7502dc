/**
 * What tea makes of The Edge Agent's spellings: every TEA key and action met in TEA's own agent files (the
 * corpus, docs/tea-compat.md) with its status in tea. The loader uses it to name a TEA feature tea does not have
 * as such ("`settings.ltm` is TEA's long-term memory…") instead of a bare unknown key or action, and
 * `test/compat/print.ts --features` prints it as the table in docs/tea-compat.md.
 *
 * Statuses: `supported` (the same meaning), `mapped` (accepted and turned into tea's own form), `accepted`
 * (accepted; what it asks for is what tea does anyway, or it only informs), `ignored` (TEA's own runtime does not read
 * it either: tea warns and sets it aside), `planned` (an open tea issue will
 * bring it), `not in tea` (needs a cloud service, a Python library or another runtime; no plan).
 */

import { once } from '../core/util.ts'

export type TeaStatus = 'supported' | 'mapped' | 'accepted' | 'ignored' | 'planned' | 'not in tea'

export interface TeaFeature {
  status: TeaStatus
  /** What it is in TEA, and where tea stands: one clause each. */
  note: string
}

const planned = (note: string): TeaFeature => ({ status: 'planned', note })
const absent = (note: string): TeaFeature => ({ status: 'not in tea', note })
const mapped = (note: string): TeaFeature => ({ status: 'mapped', note })
const accepted = (note: string): TeaFeature => ({ status: 'accepted', note })
const supported = (note: string): TeaFeature => ({ status: 'supported', note })
const ignored = (note: string): TeaFeature => ({ status: 'ignored', note })

/**
 * Marks, on a node of the parsed file, that a TEA feature tea lacks stands in for it: the loader keeps the node
 * (name and routing) and running it fails with TEA_UNSUPPORTED and this message.
 */
export const UNSUPPORTED = Symbol('tea-unsupported')

/**
 * Key paths; `*` stands for a list index or a mapping key. The tables are built when first asked for: a file in
 * tea's own dialect never needs them, and building them cost every start ~0.3 ms (issue 14).
 */
export const teaKeys = once(
  (): Readonly<Record<string, TeaFeature>> => ({
    name: supported('the agent name (optional: the file name stands in)'),
    description: supported('free text'),
    version: supported('free text'),
    state_schema: accepted('not checked by tea'),
    initial_state: supported('the starting state'),
    variables: supported('constants for templates and run: code'),
    settings: supported('runtime settings'),
    config: supported('run configuration'),
    nodes: supported('the nodes'),
    edges: supported('edges, including conditional ones'),
    imports: absent('Python modules of actions'),
    input_schema: absent(
      "TEA's check of the run's input (type, required, default, ranges, pattern, choices), answered with a 422-style event; tea does not check the input",
    ),
    output_schema: absent("the response shape of TEA's HTTP endpoint; tea's result is the final state"),
    endpoint: absent("TEA's HTTP endpoint for the agent (path, method, auth); tea serve has its own routes"),
    data: absent('inline data for Python actions'),
    secrets: planned('secrets from the environment or a vault'),
    extraction_schema: supported("validate.extraction's structural schema"),
    validation_constraints: supported("validate.extraction's Prolog rules (the prolog feature)"),
    semantic_probes: supported("validate.extraction's model probes (through settings.llm)"),
    validation_logging: accepted('accepted and not used: results are in the state and the trace'),
    interrupt_before: planned('write it under config: interrupt_before'),
    checkpoint: absent("TEA's checkpoint file options; tea checkpoints every step into its store"),
    'config.interrupt_before': supported('interrupts before nodes'),
    'config.interrupt_after': supported('interrupts after nodes'),
    'config.raise_exceptions': accepted('tea always stops a run on a node error'),
    'config.checkpoint_dir': accepted('tea checkpoints every step into its store (--data-dir)'),
    'config.checkpoint': absent(
      "resuming from one of TEA's checkpoint files when the file loads; tea resumes a run with tea resume <run-id>",
    ),
    'config.max_execution_time': supported('a time limit for the run, ms (RUN_TIMEOUT)'),
    'settings.llm': supported('model defaults'),
    'settings.llm.model': mapped("TEA's model names and provider: forms"),
    'settings.llm.provider': mapped('ollama, openai, auto, litellm, shell, local (a GGUF model in the process)'),
    'settings.llm.temperature': supported('sampling temperature'),
    'settings.llm.timeout': supported('seconds per attempt'),
    'settings.llm.max_retries': supported('retries of transient failures'),
    'settings.llm.api_base': mapped('= base_url'),
    'settings.llm.max_tokens': supported('reply length'),
    'settings.llm.shell_provider': supported('the command-line model'),
    'settings.llm.shell_providers': supported('command-line models'),
    'settings.llm.api_key': supported('the key for an OpenAI-compatible server (else OPENAI_API_KEY); write it as ${VAR}'),
    'settings.llm.deployment': absent('Azure OpenAI deployments'),
    'settings.llm.default_model': mapped('= model when model is not set'),
    'settings.llm.default_provider': mapped('= provider when provider is not set'),
    'settings.llm.backend': mapped(
      'local: the GGUF model (model_path, TEA_MODEL_PATH) run by llama.cpp in the tea process; api and auto: the model named',
    ),
    'settings.llm.model_path': supported('the GGUF file for provider/backend local, relative to the agent file'),
    'settings.llm.n_ctx': supported("a GGUF model's context size (tokens)"),
    'settings.llm.n_gpu_layers': accepted('accepted and ignored: tea runs GGUF models on the CPU'),
    'settings.llm.n_threads': mapped("= threads: a GGUF model's CPU threads"),
    'settings.llm.chat_format': supported("a GGUF model's chat format instead of the template in the file"),
    'settings.model': ignored("TEA's runtime reads the model from settings.llm.model only (yaml_engine.py); write it there"),
    'settings.temperature': ignored("TEA's runtime reads the temperature from settings.llm.temperature only; write it there"),
    'settings.shell_providers': supported('command-line models'),
    'settings.ltm': mapped(
      "long-term memory on tea's store: backend sqlite, duckdb (and lmdb, memory) are tea's store, path is not used; a backend that needs a service (hierarchical, firestore, postgres…) is a warning and ltm.* nodes fail",
    ),
    'settings.parallel': supported(
      'the parallel strategy: thread and process run the branches as tea does, concurrently, their Python, Lua and Prolog on worker threads; max_workers is accepted (tea does not cap a fan-out); remote (other hosts over SSH) is refused',
    ),
    'settings.parallel.remote': absent("the hosts of TEA's remote strategy (branches over SSH)"),
    'settings.parallel.streams': absent("TEA's stream channels between nodes (Unix pipes under the process strategy)"),
    'settings.auto_trace': mapped('with trace_exporter: file, every run event goes to trace_file as NDJSON (as --trace)'),
    'settings.trace_exporter': mapped("file: the trace file; console: tea's progress lines on stderr"),
    'settings.trace_file': mapped('where the trace goes (default <name>.trace.jsonl beside the agent)'),
    'settings.auto_trace_llm_payloads': accepted("accepted and ignored: tea's trace holds run events, not model payloads"),
    'settings.opik': absent('Opik tracing (a cloud service)'),
    'settings.memory': absent('mem0 memory (a cloud service)'),
    'settings.llamaindex': absent('LlamaIndex retrieval (a Python library)'),
    'settings.dspy': absent('DSPy (a Python library)'),
    'settings.textgrad': absent('TextGrad (a Python library)'),
    'settings.a2a': absent("TEA's agent-to-agent messaging; tea agents coordinate through AOF/1"),
    'settings.agents': supported(
      'named sub-agents for agent.*: model, system_prompt, temperature, max_tokens, timeout, retry; what one leaves out comes from settings.llm',
    ),
    'settings.execution': absent(
      "the settings of TEA's execution.run (shell commands in git worktrees); tea's sandboxes run no shell, and TEA's runtime has no execution.run either",
    ),
    'settings.prolog': ignored(
      'no TEA runtime reads settings.prolog (preload_file is in one example only); consult rules inside the Prolog run: code, or give them to prolog.query as program',
    ),
    'settings.graph': absent("TEA's graph database"),
    'settings.interview': absent('settings of one TEA example'),
    'settings.progress': absent("TEA's progress output; tea prints progress on stderr"),
    'settings.secrets': planned('secrets from the environment or a vault'),
    'settings.rate_limiters': supported('named rate limiters ({rpm} or {rps}) for ratelimit.wrap'),
    'settings.session': mapped(
      "sessions kept in tea's store (the data dir) whatever backend names, with ttl and persist_fields; a run given a session_id starts from it, and auto_save saves a completed run",
    ),
    'settings.firestore': absent('Firestore (a cloud service)'),
    'settings.error_handling': supported(
      "the run-wide on_error: mode (raise, graceful = continue, retry), max_retries, retry_delay; a node's on_error overrides it field by field, as in TEA",
    ),
    'settings.error_handling.backoff_multiplier': absent('a retry backoff other than doubling; tea doubles the delay each retry'),
    'settings.error_handling.retryable_errors': absent("TEA's list of error types to retry; tea retries any error"),
    'settings.error_handling.capture_traceback': absent("the Python traceback in TEA's __error__ state"),
    'settings.error_handling.clear_on_success': absent("clearing TEA's __error__ state key after a node succeeds"),
    'settings.error_handling.error_responses': absent("the HTTP responses of TEA's endpoint for errors"),
    'nodes.*.on_error.backoff_multiplier': absent('a retry backoff other than doubling; tea doubles the delay each retry'),
    'nodes.*.on_error.retryable_errors': absent("TEA's list of error types to retry; tea retries any error"),
    'nodes.*.on_error.capture_traceback': absent("the Python traceback in TEA's __error__ state"),
    'settings.auth': absent("authentication for TEA's HTTP endpoint (Firebase, JWT, API key); tea serve has its own"),
    'nodes.*.name': supported('the node name'),
    'nodes.*.description': supported('free text'),
    'nodes.*.uses': supported('the action'),
    'nodes.*.action': supported('= uses'),
    'nodes.*.with': supported("the action's parameters"),
    'nodes.*.params': ignored(
      "neither TEA runtime reads it (yaml_nodes.py gives the action with:, and the Rust runtime's node has with: only), so the action gets no parameters from it; write with:",
    ),
    'nodes.*.output_key': mapped('= output: on an action node (yaml_nodes.py reads output, else output_key)'),
    'nodes.*.input': mapped("a dynamic_parallel subgraph:'s input mapping: the sub-agent's starting state, rendered per item"),
    'nodes.*.__delete__': absent("TEA's overlay marker (tea run --overlay deletes the node); tea has no overlays"),
    'nodes.*.output': supported('where the result goes'),
    'nodes.*.run': supported(
      'run: code: JavaScript, Prolog, Lua or Python (language:, run: {type, code}, a % prolog / -- lua first line, settings.run_language; unmarked, Python or Lua when the code is not JavaScript and reads as one, Python when JavaScript can only fail on it (state.get(…), a free True/False/None), and the other unmarked bodies of its file follow); run: {type: expression} is Python',
    ),
    'nodes.*.language': supported('javascript, prolog, lua, python (each engine a build feature)'),
    'nodes.*.script': mapped('= run: (a language: says which)'),
    'nodes.*.goto': supported('routing rules'),
    'nodes.*.interrupt': supported('interrupt before or after the node'),
    'nodes.*.timeout': supported('a time limit for the node'),
    'nodes.*.on_error': supported('retry, continue or fall back'),
    'nodes.*.fan_in': accepted("marks the node that joins TEA's parallel edges; tea reads the join from the edges"),
    'nodes.*.type': mapped(
      "dynamic_parallel with action:, steps: or subgraph: (flow.map, items checkpointed one by one, each result as TEA's ParallelFlowResult; a subgraph's nodes run as each item's steps), while_loop (flow.while)",
    ),
    'nodes.*.steps': mapped('sequential sub-steps (flow.steps)'),
    'nodes.*.items': mapped('dynamic_parallel items'),
    'nodes.*.item_var': mapped('dynamic_parallel item variable'),
    'nodes.*.index_var': mapped('dynamic_parallel index variable'),
    'nodes.*.max_concurrency': mapped('dynamic_parallel concurrency (default 4)'),
    'nodes.*.fail_fast': mapped('dynamic_parallel failure policy (default false, as in TEA)'),
    'nodes.*.subgraph': mapped(
      "dynamic_parallel's sub-agent file, in the agent's folder, run per item from input: (its nodes as the item's steps, in file order or one chain of edges)",
    ),
    'nodes.*.condition': mapped('while_loop condition (on another node TEA ignores it, and tea warns and sets it aside)'),
    'nodes.*.interrupt_after': ignored('TEA reads interrupt: after on a node, or config.interrupt_after'),
    'nodes.*.interrupt_before': ignored('TEA reads interrupt: before on a node, or config.interrupt_before'),
    'nodes.*.prompt': ignored("TEA's runtime does not read a node's prompt:; give it to llm.call's with:"),
    'nodes.*.inputs': ignored("TEA's runtime does not read a node's inputs:; give the action's parameters under with:"),
    'nodes.*.config': ignored("TEA's runtime does not read a node's config:; give the action's parameters under with:"),
    'nodes.*.max_iterations': mapped('while_loop bound (1–1000)'),
    'nodes.*.body': mapped('while_loop body'),
    'nodes.*.next': mapped('= goto, with condition for if'),
    'nodes.*.paths': absent(
      "neither TEA runtime reads a node's paths: (nor its condition: outside a while_loop), so TEA runs such a node as a no-op; tea keeps it as a node that fails when reached: route with goto: rules or edges with when:",
    ),
    'nodes.*.streams': absent("TEA's stream channels between nodes"),
    'nodes.*.outputs': ignored("neither TEA runtime reads a node's outputs: (yaml_nodes.py reads output:); write output:"),
    'nodes.*._render_items': absent('an internal flag of one TEA example'),
    'nodes.*.edges': absent('edges inside a node'),
    'edges.*.from': supported('the source node'),
    'edges.*.to': supported('the target node'),
    'edges.*.when': mapped('lowered onto goto rules'),
    'edges.*.condition': mapped('lowered onto goto rules'),
    'edges.*.fan_in': supported('the fan-in of a parallel edge'),
    'edges.*.type': mapped('type: parallel edges, gathered by source into one fan-out'),
    'edges.*.parallel_strategy': mapped(
      'thread (and process): branches run concurrently, as tea runs them; remote: a warning, and the branches run in this process',
    ),
    'edges.*.parallel': mapped(
      "parallel: true with fan_in: is a parallel edge, as TEA's reference documents it (navigation.md), = type: parallel",
    ),
    'edges.*.__delete__': absent("TEA's overlay marker (tea run --overlay deletes the edge); tea has no overlays"),
    'edges.*.stream_mode': absent("TEA's stream channels"),
  }),
)

/** Action names, or a family with `.*`. */
export const teaActions = once(
  (): Readonly<Record<string, TeaFeature>> => ({
    'llm.call': supported('a model call'),
    'llm.stream': supported('a streamed model call'),
    'llm.chat': supported('= llm.call, with tokens_used'),
    'llm.tools': supported(
      "a model call with tools (native tool calling), each tool's action run on the model's arguments, round after round; TEA's result shape",
    ),
    'llm.embed': supported("embeddings (Ollama's /api/embed, OpenAI's /v1/embeddings)"),
    'plan.*': supported('planning: decompose, execute, replan, status'),
    'retry.loop': supported('validate, correct through a node of the agent, validate again (validate_args re-rendered each time)'),
    'reflection.loop': supported(
      "generate, evaluate (schema, llm, custom), correct; run: code in JavaScript, or Python with TEA's contract; evaluators in Lua too (docs/reasoning.md)",
    ),
    'reflection.*': planned('reflection.evaluate and reflection.correct outside a loop'),
    'reason.*': supported(
      'the reasoning feature: chain of thought, ReAct with real tools (checkpointed per step), self-correction, decomposition',
    ),
    'reason.dspy.*': absent('DSPy (a Python library)'),
    'file.*': supported('files in the workspace'),
    'http.*': supported('HTTP calls'),
    'json.*': supported('JSON parse and transform'),
    'state.set': absent('neither TEA runtime has this action (TEA fails with Unknown action); set state with output: or a run: node'),
    'memory.retrieve': supported('= memory.get, with the key in the result as TEA returns it'),
    'memory.store': supported('memory on the LMDB store (memory.get, memory.list, memory.delete too)'),
    'memory.mem0.*': absent('mem0 (a cloud service)'),
    'ltm.*': supported(
      "store, retrieve, delete, search on tea's store (LMDB), with TEA's result shapes; search ranks by BM25 over an inverted index (higher scores first), not FTS5 syntax",
    ),
    'graph.*': absent("TEA's graph database"),
    'rag.llamaindex.*': absent('LlamaIndex (a Python library)'),
    'llamaextract.*': absent('LlamaExtract (a cloud service)'),
    'web.scrape': supported('fetch a page: title, readable text, links'),
    'web.*': absent('web search and crawling services'),
    'a2a.*': absent("TEA's agent-to-agent messaging; tea agents coordinate through AOF/1"),
    'agent.*': supported(
      "dispatch, parallel, sequential, coordinate: sub-agent model calls through tea's clients, TEA's result shapes; answered calls are kept until the node ends, so a resumed run does not repeat them",
    ),
    'agent.crewai_delegate': mapped(
      "TEA's native path, as TEA runs it without CrewAI (a Python library): agent.sequential, or agent.coordinate when hierarchical",
    ),
    'session.*': absent(
      "TEA's session lifecycle (create, end, archive, restore, get, list) on Firestore and Cloud Storage (cloud services); session.load, save, delete and exists are in tea",
    ),
    'session.load': supported("a saved session from tea's store (settings.session)"),
    'session.save': supported("the state, or some keys of it, into tea's store for ttl seconds (settings.session)"),
    'session.delete': supported("removes a session from tea's store"),
    'session.exists': supported("whether tea's store keeps a session"),
    'execution.*': absent(
      "TEA's execution.run (TEA-RALPHY-001.6): shell commands in git worktrees; tea's sandboxes run no shell, and TEA's runtime registers no execution.run either",
    ),
    'code.execute': mapped(
      "Python run as written in tea's Python sandbox under allow_inline_code, run_memory_mb and a time limit; TEA's result shape with what it printed",
    ),
    'lua.*': supported('lua.eval: Lua code given state (the lua feature)'),
    'prolog.*': supported("prolog.query: a goal's solutions over clauses and facts (the prolog feature)"),
    'prolog.assert': absent("TEA's shared knowledge base; assert facts inside Prolog run: code or pass them to prolog.query"),
    'prolog.retract': absent("TEA's shared knowledge base; each Prolog run starts clean in tea"),
    'prolog.consult': absent('rules from a .pl file; give them to prolog.query as program (file.read first)'),
    'learn.textgrad.*': absent('TextGrad (a Python library)'),
    'validate.extraction': supported('structure, Prolog constraints (the prolog feature) and model probes'),
    'validate.generate_prompt': supported(
      'the extraction prompt of extraction_schema (guide_extraction: true sets variables.extraction_prompt)',
    ),
    // The rest of TEA's action reference (docs/shared/yaml-reference/actions/*.md), each named so that a file using
    // it meets what it is rather than an unknown action; test/actions/tea-actions-known.test.ts holds the list.
    'actions.*': planned("TEA's second spelling of every action (actions.file_read = file.read); write the dotted name"),
    'auth.*': absent("authentication of TEA's HTTP server (Firebase Auth, JWT: cloud services)"),
    'cache.*': supported(
      "cache.wrap, cache.get, cache.invalidate: action results cached in long-term memory (tea's store), TEA's keys and TTLs",
    ),
    'catalog.*': absent('DuckLake catalog tables (a database)'),
    'checkpoint.*': absent("TEA's checkpoint files; tea checkpoints every step into its store (tea resume)"),
    'code.sandbox': absent("TEA's persistent RestrictedPython sandbox sessions (a Python library)"),
    'csv.*': planned('CSV text to and from lists of rows'),
    'data.validate': planned('validating data against a JSON Schema (validate.extraction checks structure today)'),
    'data.merge': planned('deep merge of mappings'),
    'data.filter': planned('filtering a list with predicates'),
    'data.*': absent('tabular tables queried with SQL (DuckDB, a database)'),
    'duckdb.*': absent("DuckDB in the browser (TEA's WebAssembly build)"),
    'embedding.create': supported("TEA's result shapes; embeddings cached in tea's store by model and text"),
    'vector.*': supported(
      "vector.store, vector.query (exact cosine, TEA's filter operators), vector.index_files (tea adds vector.delete): collections in tea's store (docs/memory.md)",
    ),
    'error.*': planned("inspecting and clearing the last node error (TEA's error_handling settings); on_error: handles errors today"),
    'error.respond': absent("an HTTP error response of TEA's server mode; tea serve answers with the run's state"),
    'http.respond': absent("the HTTP response of TEA's server mode; tea serve answers with the run's state"),
    'firestore.*': absent('Firestore (a cloud service)'),
    'json.stringify': planned('a value as JSON text; a template with | tojson does it today'),
    'llm.retry': supported(
      "= llm.call with max_retries (default 3), as TEA's deprecated llm.retry is; tea's backoff, not base_delay/max_delay",
    ),
    'memory.summarize': planned('summarising the conversation in memory with a model'),
    'memory.cloud_store': absent('Firebase agent memory (a cloud service)'),
    'memory.cloud_retrieve': absent('Firebase agent memory (a cloud service)'),
    'memory.cloud_list': absent('Firebase agent memory (a cloud service)'),
    'memory.grep': supported("over one collection of tea's store (`collection`, default tea.ltm); docs/memory.md"),
    'memory.sql_query': absent('Firebase agent memory queried through DuckDB (a cloud service and a database)'),
    'memory.embed': absent('Firebase agent memory (a cloud service)'),
    'memory.vector_search': absent('Firebase agent memory (a cloud service)'),
    'opik.*': absent('Opik tracing (a cloud service)'),
    'secrets.*': planned('secrets from the environment or a vault'),
    'semtools.*': absent('semantic search through the semtools command (an external program with its own models)'),
    'storage.*': absent('fsspec storage (S3, GCS, Azure: cloud services; a Python library); file.* reads and writes the workspace'),
    'tools.crewai': absent('CrewAI tools (a Python library)'),
    'tools.langchain': absent('LangChain tools (a Python library)'),
    'tools.mcp': supported(
      "an MCP server's tool, TEA's with: and result; a server named in tea's settings.mcp.servers (stdio or streamable HTTP), or written out; ReAct's tools: offers them as mcp.<server>.<tool> (docs/integrations.md)",
    ),
    'tools.discover': absent("discovering CrewAI, LangChain and MCP tools (Python libraries, other programs); tools.list lists tea's"),
    'validate.input': planned('validating input against a schema'),
    'validate.schema': planned('a reusable input validator'),
    'ratelimit.wrap': supported(
      "TEA's named rate limiters around any action (settings.rate_limiters, rpm, rps, timeout), with its result shape",
    ),
    'schema.merge': supported("TEA's deep merge of JSON schemas (path: in the workspace, inline:); uses: (Git, fsspec) is not fetched"),
    'trace.*': supported("trace.start, trace.log, trace.end: TEA's spans, written into the run events (--trace, settings.auto_trace)"),
    'text.insert_citations': absent('one TEA example action'),
    'core.*': absent(
      'neither TEA runtime has this action (TEA fails with Unknown action): core.switch, core.condition, core.return appear only in examples; use goto: and output:',
    ),
    'actions.notify': absent('notifications (a cloud service)'),
    return: absent('neither TEA runtime has this action (TEA fails with Unknown action); use output:'),
    template: absent(
      'neither TEA runtime has this action (TEA fails with Unknown action) (its templates are template.render in one document, also absent); use output: or json.transform',
    ),
  }),
)

/** TEA's node kinds (`type:`). dynamic_parallel is lowered (agent/tea-nodes.ts) unless its `subgraph:` cannot be. */
export const teaNodeTypes = once(
  (): Readonly<Record<string, TeaFeature>> => ({
    dynamic_parallel: planned(
      "dynamic_parallel with a subgraph: tea does not take: a URL, a path out of the agent's folder or a missing file, or a sub-agent that routes (conditions, goto, parallel edges) or has node kinds (with action:, steps: or any other subgraph: it runs as flow.map)",
    ),
    while_loop: mapped('a bounded loop (flow.while)'),
  }),
)

/** The TEA feature a key path names, with `*` for indexes and mapping keys matched either way. */
export function teaKey(
  path: ReadonlyArray<string | number>,
  value?: unknown,
  node?: Record<string, unknown>,
): { key: string; feature: TeaFeature } | undefined {
  const general = path.map((p) => (typeof p === 'number' ? '*' : p)).join('.')
  // TEA reads a node's condition: only on a while_loop (yaml_nodes.py); elsewhere its runtime ignores it.
  if (general === 'nodes.*.condition' && node && node.type !== 'while_loop')
    return {
      key: general,
      feature: ignored('TEA reads condition: only on a while_loop node; route with goto: rules or edges with when:'),
    }
  if (general === 'nodes.*.type' && typeof value === 'string') {
    return {
      key: `type: ${value}`,
      feature: Object.hasOwn(teaNodeTypes(), value)
        ? teaNodeTypes()[value]!
        : absent(`a node kind TEA may have; tea does not know '${value}'`),
    }
  }
  const keys = teaKeys()
  if (Object.hasOwn(keys, general)) return { key: general, feature: keys[general]! }
  return undefined
}

/** The TEA feature an action name is, by its name or its family (`ltm.store` → `ltm.*`). */
export function teaAction(name: string): { key: string; feature: TeaFeature } | undefined {
  const actions = teaActions()
  if (Object.hasOwn(actions, name)) return { key: name, feature: actions[name]! }
  const parts = name.split('.')
  for (let i = parts.length - 1; i > 0; i--) {
    const family = `${parts.slice(0, i).join('.')}.*`
    if (Object.hasOwn(actions, family)) return { key: family, feature: actions[family]! }
  }
  return undefined
}

/** The sentence for a TEA feature tea does not have: what it is and where tea stands. */
export function teaMessage(what: string, feature: TeaFeature): string {
  if (feature.status === 'ignored') return `${what} is not read by TEA's runtime either; tea sets it aside: ${feature.note}`
  return feature.status === 'planned'
    ? `${what} is a TEA feature that tea does not provide yet: ${feature.note}`
    : `${what} is a TEA feature that tea does not provide: ${feature.note}`
}
