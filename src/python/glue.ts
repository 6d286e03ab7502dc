/**
 * The Python side of tea's contract with `run:` code in Python, as TEA's Python runtime defines it: the code sees
 * `state` (a dict), `variables`, `json` and `datetime`; if its text contains `return` it is the body of a function
 * and what it returns is the update (a dict; another value becomes `{"result": value}`, None nothing); otherwise
 * every variable it sets whose name does not start with `_` and whose value is data is the update. Values cross as JSON text. Each run has
 * globals of its own. What TEA gave beyond the standard library (`requests`, `OpenAI`, its `actions` registry) is
 * there as a name that fails with a clear error when used, and an import of a module Pyodide does not carry names
 * the module.
 *
 * Two more of TEA's semantics: a write into `state` in place (`state["x"] = 1`) is kept, as TEA's engine keeps it
 * (its `state` is the run's own dict), merged under what the code returns; and the results of a `dynamic_parallel`
 * node (tea stores TEA's `ParallelFlowResult` as its JSON form, src/actions/flow/map.ts) are objects again, read as
 * TEA's are: `r.state`, `r.success`, `r["key"]` and `r.get("key")` falling through to the branch's state.
 * `tea_reflect` runs a `reflection.loop` generator, corrector or evaluator with TEA's other contract for code (its
 * reflection actions): the code is executed as it is and its value is the variable `result` it sets.
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
    if depth > 120:
        raise ValueError('the value is nested too deep (over 120 levels, or it contains itself)')
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

def _message(error, state=None):
    if isinstance(error, NameError) and isinstance(state, dict) and getattr(error, 'name', None) in state:
        # TEA's runtimes give run: code no variable per state key either; the author meant the state's.
        return (f"NameError: {error}; run: code sees the state as state, not as variables: "
                f"write state[{error.name!r}] (TEA's Python runtime does not define '{error.name}' either)")
    if isinstance(error, ModuleNotFoundError) and error.name and error.name.split('.')[0] in _BRIDGE:
        return (f"Python module '{error.name}' is not available in tea: run: code in Python cannot reach "
                f"JavaScript or the host (docs/agents.md, run: in Python)")
    if isinstance(error, ModuleNotFoundError) and error.name:
        top = error.name.split('.')[0]
        return (f"Python module '{top}' is not available in tea: run: code in Python has the standard library only "
                f"(Pyodide; nothing is downloaded)")
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg}"
    return f"{type(error).__name__}: {error}"

_BRANCH_DEFAULTS = {'error_type': None, 'traceback': None, 'timeout': False, 'retry_count': 0,
                    'circuit_state': None, 'attempt_errors': [], 'exit_code': None}

class ParallelFlowResult(dict):
    """TEA's result of one dynamic_parallel branch: a dict (its JSON form) read as TEA's object is."""
    __slots__ = ()
    def __getattr__(self, name):
        if dict.__contains__(self, name):
            return dict.__getitem__(self, name)
        if name in _BRANCH_DEFAULTS:
            return _BRANCH_DEFAULTS[name]
        raise AttributeError(f"'ParallelFlowResult' object has no attribute '{name}'")
    def __missing__(self, key):
        state = dict.get(self, 'state')
        if isinstance(state, dict) and key in state:
            return state[key]
        if key in _BRANCH_DEFAULTS:
            return _BRANCH_DEFAULTS[key]
        raise KeyError(key)
    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default
    def __contains__(self, key):
        state = dict.get(self, 'state')
        return dict.__contains__(self, key) or key in _BRANCH_DEFAULTS or (isinstance(state, dict) and key in state)

def _is_branch(value):
    return (isinstance(value, dict) and isinstance(value.get('branch'), str) and isinstance(value.get('success'), bool)
            and 'state' in value)

class _BranchState(dict):
    """One branch of a parallel fan-out as tea keeps it (its state), read as TEA's ParallelFlowResult too."""
    __slots__ = ()
    def __getattr__(self, name):
        if name == 'state':
            return self
        if name == 'success':
            return '__error__' not in self
        if name == 'error':
            error = dict.get(self, '__error__')
            return error.get('message') if isinstance(error, dict) else error
        if name == 'branch':
            return None
        if name in _BRANCH_DEFAULTS:
            return _BRANCH_DEFAULTS[name]
        raise AttributeError(f"'ParallelFlowResult' object has no attribute '{name}'")

def _state_view(state):
    # A list of dynamic_parallel results (flow.map's results: branches) at the top of the state becomes TEA's
    # objects; the branch states a parallel fan-out hands its fan-in node (parallel_results) read as them too. Both
    # stay equal to the data they wrap, so they never count as written in place.
    if isinstance(state, dict):
        for key, value in state.items():
            if isinstance(value, list) and value and all(_is_branch(v) for v in value):
                state[key] = [ParallelFlowResult(v) for v in value]
            elif key == 'parallel_results' and isinstance(value, list) and all(isinstance(v, dict) for v in value):
                state[key] = [_BranchState(v) for v in value]
    return state

def _in_place(state, before):
    # The top-level keys the code wrote into state in place (a nested write changes its top-level value).
    if not isinstance(state, dict) or not isinstance(before, dict):
        return {}
    return {k: v for k, v in state.items() if k not in before or v != before[k]}

def _scope(code, state, variables_json):
    scope = {'__name__': '__tea_run__', '__builtins__': __builtins__, 'state': state,
             'variables': _json.loads(variables_json), 'json': _json, 'datetime': _datetime}
    if isinstance(state, dict) and 'parallel_results' in state:
        scope['parallel_results'] = state['parallel_results']  # TEA hands fan-in nodes their branches so
    for name, stand_in in _MISSING.items():
        if name in code:
            scope[name] = stand_in
    return scope

def tea_run(code, state_json, variables_json):
    state = _state_view(_json.loads(state_json))
    scope = _scope(code, state, variables_json)
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
        # TEA's engine keeps what the code wrote into state in place, then merges the returned update over it.
        written = _in_place(state, _json.loads(state_json))
        return _json.dumps({'ok': _plain({**written, **update} if written else update)})
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        return _json.dumps({'error': _message(error, state), 'line': _line(error, offset)})

def tea_reflect(code, state_json, variables_json, output_json):
    # TEA's reflection actions exec the code as it is, with output and the loop's keys in scope, and take the
    # variable result it sets (else output, when the code rebound it).
    state = _state_view(_json.loads(state_json))
    scope = _scope(code, state, variables_json)
    output = _json.loads(output_json)
    scope.update({'output': output, 're': __import__('re'),
                  'reflection_output': state.get('reflection_output'),
                  'reflection_errors': state.get('reflection_errors', []),
                  'reflection_iteration': state.get('reflection_iteration', 0)})
    try:
        exec(compile(code, '<run>', 'exec'), scope)
        if 'result' in scope:
            value = scope['result']
        elif scope['output'] is not output:
            value = scope['output']
        else:
            value = None
        return _json.dumps({'ok': _plain(value)})
    except BaseException as error:
        if isinstance(error, KeyboardInterrupt):
            raise
        return _json.dumps({'error': _message(error, state), 'line': _line(error, 0)})

# Pyodide's bridges to JavaScript, and ctypes. The gate (src/python/gate.ts) is what closes them: these names only
# make the refusal an ImportError that says why, instead of the run failing at the gate.
_BRIDGE = {'js', 'pyodide', 'pyodide_js', '_pyodide', '_pyodide_core', 'ctypes', '_ctypes', 'micropip'}
_PROCESS = ('system', 'popen', 'fork', 'forkpty', 'kill', 'killpg', 'posix_spawn', 'posix_spawnp',
            'execl', 'execle', 'execlp', 'execlpe', 'execv', 'execve', 'execvp', 'execvpe',
            'spawnl', 'spawnle', 'spawnlp', 'spawnlpe', 'spawnv', 'spawnve', 'spawnvp', 'spawnvpe')

class _Closed:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in _BRIDGE:
            raise ModuleNotFoundError(f"No module named '{name}'", name=name)
        return None

def _no_process(*args, **kwargs):
    raise PermissionError("tea's Python run: code cannot start processes or send signals")

def _seal():
    import os, subprocess
    for name in _PROCESS:
        if hasattr(os, name):
            setattr(os, name, _no_process)
    subprocess.Popen = _no_process
    _sys.meta_path[:] = [_Closed()] + [f for f in _sys.meta_path if type(f).__module__.split('.')[0] not in _BRIDGE]
    for name in list(_sys.modules):
        if name.split('.')[0] in _BRIDGE:
            del _sys.modules[name]

def tea_main():
    # One run of one interpreter (src/python/interpreter.ts): the inputs and the answer are files, so that nothing
    # crosses the JavaScript FFI while the code runs.
    with open('/tea/in.json', encoding='utf-8') as f:
        given = _json.load(f)
    _seal()
    if 'output' in given:
        answer = tea_reflect(given['code'], given['state'], given['variables'], given['output'])
    else:
        answer = tea_run(given['code'], given['state'], given['variables'])
    with open('/tea/out.json', 'w', encoding='utf-8') as f:
        f.write(answer)

def tea_check(code, as_is=False):
    wrapped = 'return' in code and not as_is
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
