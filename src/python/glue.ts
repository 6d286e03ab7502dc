/**
 * The Python side of tea's contract with `run:` code in Python, as TEA's Python runtime defines it: the code sees
 * `state` (a dict), `variables`, `json` and `datetime`; if its text contains `return` it is the body of a function
 * and what it returns is the update (a dict; another value becomes `{"result": value}`, None nothing); otherwise
 * every variable it sets whose name does not start with `_` and whose value is data is the update. Values cross as JSON text. Each run has
 * globals of its own. What TEA gave beyond the standard library (`requests`, `OpenAI`, its `actions` registry) is
 * there as a name that fails with a clear error when used, and an import of a module Pyodide does not carry names
 * the module.
 */

export const GLUE = String.raw`
import json as _json, sys as _sys, traceback as _traceback, datetime as _datetime, types as _types

class _Unavailable:
    def __init__(self, name, why):
        object.__setattr__(self, '_name', name)
        object.__setattr__(self, '_why', why)
    def _fail(self, *args, **kwargs):
        raise RuntimeError(f"{self._name} is not available in tea's Python run: code: {self._why}")
    __getattr__ = __call__ = __getitem__ = _fail

_MISSING = {
    'requests': _Unavailable('requests', 'no packages beyond the standard library; call http.get from a uses: node'),
    'OpenAI': _Unavailable('OpenAI', 'no packages beyond the standard library; call llm.call from a uses: node'),
    'actions': _Unavailable('actions', 'call actions from uses: nodes (or from JavaScript run: code with ctx.invoke)'),
}

def _plain(value, depth=0):
    if depth > 200:
        raise ValueError('the value is nested too deep (over 200 levels, or it contains itself)')
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and value not in (float('inf'), float('-inf')) else None
    if isinstance(value, dict):
        return {str(k): _plain(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v, depth + 1) for v in value]
    if isinstance(value, (_datetime.datetime, _datetime.date, _datetime.time)):
        return value.isoformat()
    return str(value)

_DATA = (type(None), bool, int, float, str, list, tuple, dict, set, frozenset, _datetime.date, _datetime.time)

def _kept(name, value):
    # TEA kept every local; modules, functions, open files and other objects have no JSON form, so tea keeps data.
    return not name.startswith('_') and isinstance(value, _DATA)

def _line(error, offset):
    for frame in reversed(_traceback.extract_tb(error.__traceback__)):
        if frame.filename == '<run>':
            return max(1, frame.lineno - offset)
    if isinstance(error, SyntaxError) and error.lineno:
        return max(1, error.lineno - offset)
    return None

def _message(error):
    if isinstance(error, ModuleNotFoundError) and error.name:
        top = error.name.split('.')[0]
        return (f"Python module '{top}' is not available in tea: run: code in Python has the standard library only "
                f"(Pyodide; nothing is downloaded)")
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg}"
    return f"{type(error).__name__}: {error}"

def tea_run(code, state_json, variables_json):
    scope = {'__name__': '__tea_run__', '__builtins__': __builtins__, 'state': _json.loads(state_json),
             'variables': _json.loads(variables_json), 'json': _json, 'datetime': _datetime}
    if isinstance(scope['state'], dict) and 'parallel_results' in scope['state']:
        scope['parallel_results'] = scope['state']['parallel_results']  # TEA hands fan-in nodes their branches so
    for name, stand_in in _MISSING.items():
        if name in code:
            scope[name] = stand_in
    wrapped = 'return' in code
    offset = 1 if wrapped else 0
    try:
        if wrapped:
            body = '\n'.join('    ' + line for line in code.split('\n'))
            compiled = compile(f'def __run_func__():\n{body}\n__result__ = __run_func__()', '<run>', 'exec')
        else:
            compiled = compile(code, '<run>', 'exec')
        names = {}
        exec(compiled, scope, names)
        if wrapped:
            result = names.get('__result__')
            update = {} if result is None else result if isinstance(result, dict) else {'result': result}
        else:
            update = {k: v for k, v in names.items() if _kept(k, v)}
        return _json.dumps({'ok': _plain(update)})
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        return _json.dumps({'error': _message(error), 'line': _line(error, offset)})

def tea_check(code):
    wrapped = 'return' in code
    try:
        if wrapped:
            body = '\n'.join('    ' + line for line in code.split('\n'))
            compile(f'def __run_func__():\n{body}\n', '<run>', 'exec')
        else:
            compile(code, '<run>', 'exec')
        return None
    except SyntaxError as error:
        return _json.dumps({'error': _message(error), 'line': _line(error, 1 if wrapped else 0)})
`
