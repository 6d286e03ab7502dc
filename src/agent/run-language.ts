/**
 * The language of `run:` code that names none, chosen as TEA's runtimes choose it: TEA's Python runtime runs every
 * unmarked `run:` body as Python and its Rust runtime as Lua, so TEA's files never say. tea decides when the file
 * loads, the same way on every load:
 * - a body that does not compile as JavaScript and looks like Python or Lua (`looksLike`) is that language. This is
 *   decided by syntax, without starting an engine (Python takes ~1 s to start); the engine's own syntax check
 *   (`tea validate`, the action's `verify`) gives the final verdict on the code;
 * - a body that compiles as JavaScript but whose JavaScript reading can only fail is Python (js-only-fails.ts): a
 *   call of a Python dict method on tea's plain state (`state.get("value", 0)`), or a free `True`, `False` or
 *   `None`, each a certain TypeError or ReferenceError when reached, where nothing in the file could make it not
 *   one. It is Python, not Lua, because TEA runs unmarked code as Python (its Rust runtime, as Lua, would fail on
 *   the `{"k": v}` such bodies return). The sign is printed by `tea validate`;
 * - the first such body, in file order, sets the file's language, and the file's other unmarked bodies follow it: a
 *   body valid in several languages (`return {"a": 1}` is JavaScript and Python) keeps the file's language;
 * - a file with no such body is JavaScript.
 * `settings.run_language` sets the file's language outright, and a node's `language:` (or `run: {type, code}`, or a
 * `% prolog` / `-- lua` first line) its own. A resumed run passes the languages its start recorded
 * (RunRecord.runLanguages): they win over the decision, so an edit to the file does not switch a body's language
 * in the middle of a run.
 */

import { compileCode } from '../code/compile.ts'
import { javascriptOnlyFails } from './js-only-fails.ts'

/** How a body's language was chosen, as `tea validate` prints it. */
export type LanguageReason = 'named' | 'settings' | 'decided' | 'file' | 'default' | 'recorded'

/** One `run:` body's language: `key` is the node's name, or `node.steps[i]` for a step's body. */
export interface RunLanguage {
  key: string
  language: string
  reason: LanguageReason
  /** What decided a body that is valid JavaScript to be Python: why JavaScript can only fail on it. */
  evidence?: string
}

export interface LanguageChooser {
  /** The language of a body that decides nothing itself. */
  file: string
  fileReason: 'settings' | 'file' | 'default'
  /** Bodies that are decisively Python or Lua, by their text, with the evidence when they compile as JavaScript. */
  decided: Map<string, { language: string; evidence?: string }>
  recorded?: Readonly<Record<string, string>>
  /** Every body's choice, in the order they were made. */
  choices: RunLanguage[]
}

/** The chooser for a file whose unmarked bodies are `bodies` (in file order). */
export function languageChooser(
  bodies: readonly string[],
  pinned: string | undefined,
  recorded?: Readonly<Record<string, string>>,
): LanguageChooser {
  const decided = new Map<string, { language: string; evidence?: string }>()
  if (pinned === undefined)
    for (const code of bodies) {
      const language = decisiveLanguage(code)
      if (language) decided.set(code, { language })
      else {
        const evidence = javascriptOnlyFails(code, bodies)
        if (evidence) decided.set(code, { language: 'python', evidence })
      }
    }
  const first = decided.values().next().value?.language
  return {
    file: pinned ?? first ?? 'javascript',
    fileReason: pinned !== undefined ? 'settings' : first !== undefined ? 'file' : 'default',
    decided,
    ...(recorded && { recorded }),
    choices: [],
  }
}

/** The language of an unmarked body, recorded in `chooser.choices`. */
export function chooseLanguage(chooser: LanguageChooser, key: string, code: string): string {
  const recorded = chooser.recorded?.[key]
  const decided = chooser.decided.get(code)
  const choice: RunLanguage =
    recorded !== undefined
      ? { key, language: recorded, reason: 'recorded' }
      : decided !== undefined
        ? { key, language: decided.language, reason: 'decided', ...(decided.evidence && { evidence: decided.evidence }) }
        : { key, language: chooser.file, reason: chooser.fileReason }
  chooser.choices.push(choice)
  return choice.language
}

/** Python or Lua when `code` is not JavaScript and looks like that language; undefined when it decides nothing. */
export function decisiveLanguage(code: string): 'python' | 'lua' | undefined {
  // The look first: it is a few regular expressions, and most of a JavaScript file's bodies end there, uncompiled
  // (the loader compiles them once more to run them).
  const like = looksLike(code)
  if (like !== 'python' && like !== 'lua') return undefined
  try {
    compileCode(code)
    return undefined
  } catch {
    return like
  }
}

/** What `tea validate` prints for a body: `python (not JavaScript; reads as Python)`. */
export function describeLanguage({ language, reason, evidence }: RunLanguage): string {
  const name = language === 'lua' ? 'Lua' : 'Python'
  const why = {
    named: 'named by the node',
    settings: 'settings.run_language',
    decided: evidence ? `as JavaScript it can only fail: ${evidence}` : `not JavaScript; reads as ${name}`,
    file: `the file's language, set by its first ${name} body`,
    default: 'no body in the file is anything else',
    recorded: 'recorded when the run started',
  }[reason]
  return `${language} (${why})`
}

/**
 * The language `run:` code that does not compile as JavaScript looks like: Python and Lua decide the body's
 * language (above); Prolog only gives the loader's hint, as TEA's runtimes run Prolog only when it is marked.
 */
export function looksLike(code: string): 'python' | 'lua' | 'prolog' | undefined {
  const has = (re: RegExp): boolean => re.test(code)
  if (has(/:-|\bstate\(\s*\w+\s*,/) && has(/\.\s*$/)) return 'prolog'
  // Lua's blocks (`local x =`, `if … then`, a closing `end`) before Python's signs: Lua reads `state["k"]` too.
  if (has(/^\s*local\s+\w+\s*=|\bthen\s*$/m) && has(/^\s*end\b/m) && !has(/^\s*(def|import|from)\s/m)) return 'lua'
  if (has(/^\s*(import\s+[\w.]+|from\s+[\w.]+\s+import\b|def\s+\w+\s*\(.*\)\s*:|elif\b|class\s+\w+.*:\s*$)/m)) return 'python'
  if (has(/\bstate\[\s*['"]|\b(True|False|None)\b|:\s*$/m)) return 'python'
  // A # comment line, an f-string, a comprehension, `x or []`, an inline if-else, str methods JavaScript lacks.
  if (has(/^\s*#(?!!)|\bf["']|\[[^\]\n]*\bfor\s+\w+(\s*,\s*\w+)*\s+in\s|\s(or|and)\s+(\[\]|None|True|False)/m)) return 'python'
  if (has(/=[^=\n]*\sif\s[^\n]*\selse\s|\.(lower|upper|strip)\(\)/)) return 'python'
  if (has(/^\s*local\s+\w+|\bthen\b|^\s*end\s*$|\.\.\s*["'\w]/m)) return 'lua'
  return undefined
}
