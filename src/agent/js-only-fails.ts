/**
 * Evidence that a `run:` body which compiles as JavaScript is Python all the same: its JavaScript reading can only
 * fail. TEA's files never say which language their `run:` code is, and much of their Python also parses as
 * JavaScript (`return {"result": state.get("value", 0) * 2}`); run as JavaScript it throws on every run. Two
 * signs are taken, each one a certain throw when the code reaches it, and each only where nothing in the body (or
 * in the file's other bodies) could make it not throw:
 * - a call of a Python dict method on `state` (`state.get(…)`, `state.items()`, …): tea's state is a plain object
 *   of data (what a checkpoint keeps), with none of these methods on it or its prototype;
 * - a free `True`, `False` or `None`: tea's JavaScript sandbox defines no such name, so reading one is a
 *   ReferenceError.
 * The test reads the code as JavaScript does, with strings, comments and regular expressions set aside, and gives no
 * evidence rather than guess: a body with a template literal or a regular expression, one that declares, assigns or
 * shadows `state` (or reaches it through `arguments` or a computed `state[k]`), defines functions, catches errors
 * (`try`), or asks what a name is (`typeof`), and a file whose bodies name the method other than by calling it
 * (`get: …`, `{get}`, `"get"`), build keys (`[k]: …`, `Object.…`) or assign the global (`True = …`), are not read
 * for it. Few of these are in a body that is both JavaScript and Python, so Python loses little. The reading is
 * linear in the code's length (a hostile body cannot make the load slow).
 */

/** Python's dict methods, none of which a plain object has. */
const DICT_METHODS = ['get', 'items', 'keys', 'values', 'setdefault', 'update', 'pop', 'copy'] as const
const PY_CONSTANTS = ['True', 'False', 'None'] as const

const MAY_SIGN = /\bstate\s*\??\.\s*(get|items|keys|values|setdefault|update|pop|copy)\s*\(|\b(True|False|None)\b/

/** Words after which the test gives no evidence: each can make a sign not throw, or hides code from the reading. */
const UNREADABLE =
  /=>|\b(function|class|let|const|var|try|catch|typeof|with|eval|Function|arguments|this|globalThis|Object|Reflect|Proxy|__proto__|prototype|delete|import|require)\b|\bstate\s*(=(?!=)|\[(?!""\]))/

/**
 * What makes `code`'s JavaScript reading certain to fail, as `tea validate` prints it (`state.get(…) is not a
 * function`), or undefined when nothing does; `others` are the file's other unmarked bodies.
 */
export function javascriptOnlyFails(code: string, others: readonly string[] = []): string | undefined {
  // Most bodies have no sign at all: a regular expression over the text spares them the reading.
  if (!MAY_SIGN.test(code)) return undefined
  const text = codeOnly(code)
  if (text === undefined || UNREADABLE.test(text)) return undefined
  for (const m of DICT_METHODS) {
    if (!new RegExp(`(^|[^.\\w$])state\\s*\\??\\.\\s*${m}\\s*\\(`).test(text)) continue
    // State holds data; the one way a function gets under `get` in one process, before a checkpoint, is code that
    // writes that key. Any body of the file naming it other than as a method call (`get: …`, `{get}`, `"get"`,
    // `state.get = …`), building keys (`[k]: …`, `state[k]`, Object.fromEntries) voids the sign.
    const writes = new RegExp(
      `(^|[^.\\w$])${m}\\b|['"]${m}['"]|\\.\\s*${m}\\s*=(?!=)|\\]\\s*:|\\bstate\\s*\\[\\s*[^'"\\s]|\\b(Object|Reflect)\\b`,
    )
    if ([code, ...others].some((b) => writes.test(b))) continue
    return `state.${m}(…) is not a function on tea's state`
  }
  for (const c of PY_CONSTANTS) {
    // Free: not a property (`x.True`), not a key or label (`True:`).
    if (!new RegExp(`(^|[^.\\w$])${c}(?![\\w$])(?!\\s*:)`).test(text)) continue
    if ([code, ...others].some((b) => new RegExp(`\\b${c}\\s*=(?!=)|\\b(globalThis|this)\\b`).test(b))) continue
    return `${c} is not defined in JavaScript`
  }
  return undefined
}

/**
 * The code as JavaScript reads it, with each string literal replaced by `""` and each comment by a space; undefined
 * when it has a template literal or a regular expression (told from a division only by a parser).
 */
function codeOnly(code: string): string | undefined {
  const parts: string[] = []
  const special = /[`"'/]/g
  let i = 0
  while (i < code.length) {
    special.lastIndex = i
    const at = special.exec(code)?.index ?? code.length
    parts.push(code.slice(i, at))
    i = at
    const c = code[i]
    if (c === undefined) break
    if (c === '`') return undefined
    if (c === '"' || c === "'") {
      let j = i + 1
      while (j < code.length && code[j] !== c && code[j] !== '\n') j += code[j] === '\\' ? 2 : 1
      if (code[j] !== c) return undefined
      parts.push('""')
      i = j + 1
    } else if (code[i + 1] === '/') {
      const end = code.indexOf('\n', i)
      i = end < 0 ? code.length : end
      parts.push(' ')
    } else if (code[i + 1] === '*') {
      const end = code.indexOf('*/', i + 2)
      if (end < 0) return undefined
      i = end + 2
      parts.push(' ')
    } else {
      // A division follows a value: a name, a number, a closing bracket or a string. The few characters before it
      // decide, so the reading stays linear in the code's length.
      const before = code.slice(Math.max(0, i - 16), i)
      if (!/[\w$)\]"']\s*$/.test(before) || /\b(return|in|of|case|do|else|void|new|yield|await)\s*$/.test(before)) return undefined
      parts.push('/')
      i++
    }
  }
  return parts.join('')
}
