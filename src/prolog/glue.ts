/**
 * The Prolog side of tea's contract with `run:` code and `prolog.query`, consulted once per engine as the module
 * `tea_glue`, which gives the code `state/2`, `return/2` and `tea_load_code/1` and nothing else of its own. TEA's
 * runtimes define the same contract (its Prolog guide: `state/2` in, `return/2` out, each clause of the code read by
 * Prolog itself and then asserted or called); this is tea's own text for it, with three differences that make a
 * run repeatable: every run's clauses live in a temporary module that is destroyed afterwards (TEA asserted rules
 * into `user`, where they outlived the node), `return/2` replaces an earlier value of the same key, and DCG rules
 * (`-->`) are translated, not asserted as facts.
 *
 * Values cross as JSON text, never as Prolog source: the state goes in through `atom_json_dict/3` (strings become
 * atoms, objects dicts, null/true/false atoms, as in TEA), the returns come out through `json_write_dict/3`, and
 * `prolog.query`'s facts are built with `=..` from JSON lists, so a hostile string is data and nothing else.
 *
 * The code is untrusted, so it runs sandboxed by SWI-Prolog's own library(sandbox) (the one SWISH and pengines use):
 * every goal is checked before it is called, and every clause before it is added, against a list of predicates
 * known to be safe — no files, streams, environment, shell, JavaScript (`js_run_script/1`, `:=/2`, `fetch/3`), flags
 * beyond a few harmless ones, global variables, or clauses in any module but the run's own. Checking clauses when
 * they are added (not only when called) is what keeps a rule that `tea_load_code/1` adds in the middle of a goal
 * from being called unchecked by that same goal. The run's own predicates count as safe while they are checked,
 * defined or not, because each of their clauses passed the same check. What the sandbox lets a run change that
 * would outlive it — a few thread-wide flags — is put back after each run, so a warm engine carries nothing from
 * one run to the next. loader.ts closes the JavaScript bridges a second time, below Prolog.
 */

export const GLUE = String.raw`
:- module(tea_glue, [state/2, return/2, tea_load_code/1]).
% The libraries TEA's code expects, in user, which a run's module inherits from: their predicates and operators.
:- user:use_module(library(lists)).
:- user:use_module(library(apply)).
:- user:use_module(library(aggregate)).
:- user:use_module(library(clpfd)).
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(modules)).
:- use_module(library(sandbox)).
:- dynamic(state/2).
:- dynamic(return_value/2).
:- dynamic(tea_flag_default/2).

% --- the sandbox ---

:- multifile(sandbox:safe_primitive/1).
:- multifile(sandbox:safe_meta/2).
% The contract: tea_load_code/1 adds each clause through tea_add/2 and calls each goal through tea_call/3.
sandbox:safe_primitive(tea_glue:state(_, _)).
sandbox:safe_primitive(tea_glue:return(_, _)).
sandbox:safe_meta(tea_glue:tea_load_code(_), []).
% Output to the current stream goes nowhere (the engine's streams are dropped), and TEA's code writes for its own
% debugging. Not write_term/2: its portray_goal option calls a goal.
sandbox:safe_primitive(system:write(_)).
sandbox:safe_primitive(system:writeq(_)).
sandbox:safe_primitive(system:print(_)).
sandbox:safe_primitive(system:write_canonical(_)).
sandbox:safe_primitive(system:nl).
sandbox:safe_primitive(system:tab(_)).
sandbox:safe_primitive(system:put_char(_)).
% Declarations TEA's code makes about its own predicates, and the libraries the glue has loaded already.
sandbox:safe_meta(system:dynamic(Specs), []) :- tea_local_specs(Specs).
sandbox:safe_meta(system:discontiguous(Specs), []) :- tea_local_specs(Specs).
sandbox:safe_meta(system:use_module(library(L)), []) :- tea_library(L).
sandbox:safe_meta(system:use_module(library(L), _), []) :- tea_library(L).
sandbox:safe_meta(system:ensure_loaded(library(L)), []) :- tea_library(L).

tea_local_specs(Specs) :- ground(Specs), tea_local_specs_(Specs).
tea_local_specs_((A, B)) :- !, tea_local_specs_(A), tea_local_specs_(B).
tea_local_specs_([]) :- !.
tea_local_specs_([H|T]) :- !, tea_local_specs_(H), tea_local_specs_(T).
tea_local_specs_(Name/Arity) :- atom(Name), integer(Arity), Arity >= 0.
tea_local_specs_(Name//Arity) :- atom(Name), integer(Arity), Arity >= 0.

tea_library(L) :- atom(L), memberchk(L, [lists, apply, aggregate, clpfd, pairs, yall, dicts, strings, ordsets, assoc, ugraphs, solution_sequences]).
tea_library(dcg/basics).

% The thread-wide flags the sandbox lets code set, as they were before any run: put back after each one.
:- forall(( sandbox:safe_prolog_flag(F, _), current_prolog_flag(F, V) ), assertz(tea_flag_default(F, V))).

tea_reset_flags :- forall(tea_flag_default(F, V), catch(set_prolog_flag(F, V), _, true)).

% tea_safe(+M, +Goal): Goal, called in M, reaches only what the sandbox allows. A predicate of M's that is not
% defined yet (a rule further down calls it) is declared for the time of the check, so the check goes on past it.
tea_safe(M, Goal) :-
    catch(safe_goal(M:Goal), E, true),
    (   var(E) -> true
    ;   E = error(existence_error(procedure, M:Skolem), _), callable(Skolem),
        functor(Skolem, Name, Arity), \+ current_predicate(M:Name/Arity)
    ->  setup_call_cleanup(M:dynamic(Name/Arity), tea_safe(M, Goal), abolish(M:Name/Arity))
    ;   throw(E)
    ).

% tea_add(+M, +Clause): adds a fact or rule to M, the run's module and no other, once its body is found safe.
tea_add(M, Clause) :-
    ( Clause = (Head :- Body) -> true ; Head = Clause, Body = true ),
    (   var(Head) -> throw(error(instantiation_error, _))
    ;   Head = Other:_ -> throw(tea_refused(format("a clause for ~q: run: code adds clauses to its own module only, not to ~q", [Head, Other])))
    ;   true
    ),
    tea_safe(M, Body),
    M:assertz(Clause).

% --- the contract ---

return(Key, Value) :-
    retractall(return_value(Key, _)),
    assertz(return_value(Key, Value)).

% A clause of run: code that is a bare term is a fact to assert, unless its name is one of these: then it is a goal.
tea_goal_name(N) :- memberchk(N, [
    return, state, ',', ';', '->', '*->', '\\+', '>', '<', '>=', '=<', '=:=', '=\\=', '=', '\\=', '==', '\\==',
    '@<', '@>', '@=<', '@>=', is, findall, bagof, setof, forall, aggregate_all, aggregate, member, memberchk,
    append, length, nth0, nth1, msort, sort, predsort, reverse, last, sum_list, sumlist, max_list, min_list,
    list_to_set, exclude, include, partition, maplist, foldl, call, once, ignore, succ, plus, between, write,
    writeln, print, format, nl, atom, number, integer, float, compound, is_list, ground, var, nonvar,
    atom_string, atom_codes, atom_chars, atom_length, atom_concat, atomic_list_concat, sub_atom, string_concat,
    string_chars, string_codes, string_to_atom, number_codes, atom_number, term_to_atom, split_string, label,
    labeling, assert, asserta, assertz, retract, retractall, get_dict, put_dict, dict_pairs, '#=', '#\\=', '#<',
    '#>', '#=<', '#>=', in, ins, all_different, all_distinct, sum, tuples_in, nb_setval, b_setval, tab
]).

tea_set_state(Json) :-
    retractall(state(_, _)),
    atom_json_dict(Json, Dict, [value_string_as(atom)]),
    forall(get_dict(K, Dict, V), assertz(state(K, V))).

% tea_run(+Code, +StateJson, +Limit, -Outcome): done(Returns) | failed(Line, Returns) | error(Line, Message)
% | memory, with the Prolog stacks held to Limit bytes.
tea_run(Code, StateJson, Limit, Outcome) :-
    tea_set_state(StateJson),
    retractall(return_value(_, _)),
    tea_limited(Limit, in_temporary_module(M, true, tea_consult(M, Code, run, Status))),
    (   Status = error(_, E), tea_memory_error(E)
    ->  retractall(return_value(_, _)), Outcome = memory
    ;   Status = error(Line, E)
    ->  tea_message(E, Message), Outcome = error(Line, Message)
    ;   tea_returns(Returns),
        ( Status = failed(Line) -> Outcome = failed(Line, Returns) ; Outcome = done(Returns) )
    ).

tea_limited(Limit, Goal) :-
    Stacks is Limit // 2,
    setup_call_cleanup(set_prolog_flag(stack_limit, Stacks), Goal, tea_reset_flags).

% Running out of stack (over stack_limit) or of heap (the cap in loader.ts) while the code ran.
tea_memory_error(error(resource_error(_), _)).

% tea_check(+Code, -Outcome): ok | error(Line, Message), reading every clause and running none.
tea_check(Code, Outcome) :-
    setup_call_cleanup(open_string(Code, In), tea_read_all(In, Status), close(In)),
    ( Status = error(Line, E) -> tea_message(E, Message), Outcome = error(Line, Message) ; Outcome = ok ).

tea_read_all(In, Status) :-
    catch(read_term(In, Term, [syntax_errors(error)]), E, true),
    (   nonvar(E) -> tea_error_line(E, 0, Line), Status = error(Line, E)
    ;   Term == end_of_file -> Status = ok
    ;   tea_read_all(In, Status)
    ).

% tea_query(+Program, +FactsJson, +Goal, +Max, +Limit, -Outcome): solutions(Json) | error(Line, Message) | memory
% Line is 0 for an error in the goal itself.
tea_query(Program, FactsJson, Goal, Max, Limit, Outcome) :-
    tea_limited(Limit, in_temporary_module(M, true, tea_query_in(M, Program, FactsJson, Goal, Max, Status))),
    (   Status = error(_, E), tea_memory_error(E) -> Outcome = memory
    ;   Status = error(Line, E) -> tea_message(E, Message), Outcome = error(Line, Message)
    ;   Outcome = Status
    ).

tea_query_in(M, Program, FactsJson, GoalText, Max, Status) :-
    atom_json_term(FactsJson, Facts, [value_string_as(atom), null(null), true(true), false(false)]),
    catch(( forall(member(F, Facts), ( F = [Name|Args], T =.. [Name|Args], tea_add(M, T) )), Added = true ),
          E0, Added = error(0, E0)),
    ( Added == true -> tea_consult(M, Program, program, Loaded) ; Loaded = Added ),
    (   Loaded = error(_, _) -> Status = Loaded
    ;   catch(tea_solutions(M, GoalText, Max, Status), E, Status = error(0, E))
    ).

tea_solutions(M, GoalText, Max, solutions(Json)) :-
    term_string(Goal, GoalText, [module(M), variable_names(Names)]),
    tea_safe(M, Goal),
    findall(Names, limit(Max, M:Goal), Found),
    maplist(tea_bindings_json, Found, Rows),
    with_output_to(string(Json), json_write_dict(current_output, Rows, [width(0)])).

tea_bindings_json(Names, Dict) :-
    findall(N-J, ( member(N=V, Names), tea_json(V, J) ), Pairs),
    dict_pairs(Dict, json, Pairs).

% Reads and processes every clause: Mode run (TEA's classification) or program (every clause asserted).
tea_consult(M, Code, Mode, Status) :-
    setup_call_cleanup(open_string(Code, In), tea_clauses(M, In, Mode, Status), close(In)).

tea_clauses(M, In, Mode, Status) :-
    catch(read_term(In, Term, [module(M), term_position(Pos), syntax_errors(error)]), E, true),
    (   nonvar(E) -> tea_error_line(E, 0, Line), Status = error(Line, E)
    ;   Term == end_of_file -> Status = done
    ;   stream_position_data(line_count, Pos, Line),
        catch(tea_clause(Mode, M, Term, Ok), E2, true),
        (   nonvar(E2) -> Status = error(Line, E2)
        ;   Ok == false -> Status = failed(Line)
        ;   tea_clauses(M, In, Mode, Status)
        )
    ).

tea_clause(_, M, (:- Body), Ok) :- !, tea_call(M, Body, Ok).
tea_clause(_, M, (Head --> Body), true) :- !, dcg_translate_rule((Head --> Body), Clause), tea_add(M, Clause).
tea_clause(_, M, (Head :- Body), true) :- !, tea_add(M, (Head :- Body)).
tea_clause(program, M, Term, true) :- !, tea_add(M, Term).
tea_clause(run, M, Term, true) :-
    compound(Term), compound_name_arity(Term, Name, _), \+ tea_goal_name(Name), !,
    tea_add(M, Term).
tea_clause(run, M, Term, Ok) :- tea_call(M, Term, Ok).

tea_call(M, Goal, Ok) :- tea_safe(M, Goal), ( call(M:Goal) -> Ok = true ; Ok = false ).

% TEA's own loader, which TEA's agents also call to load clauses held in the state: into the calling run's module.
:- module_transparent(tea_load_code/1).
tea_load_code(Code) :-
    context_module(M),
    ( atom(Code) -> atom_string(Code, Text0) ; Text0 = Code ),
    split_string(Text0, "", " \t\n", [Text1]),
    ( ( Text1 == "" ; sub_string(Text1, _, 1, 0, ".") ) -> Text = Text1 ; string_concat(Text1, ".", Text) ),
    tea_consult(M, Text, run, Status),
    % An error in the loaded text names its own line there, not only the line of the run: code that loaded it.
    ( Status = error(Line, E) -> tea_message(E, Message), throw(tea_load_code_error(Line, Message))
    ; Status = failed(_) -> fail
    ; true
    ).

tea_indicator(Goal, Text) :-
    strip_module(Goal, _, Plain),
    ( callable(Plain) -> functor(Plain, Name, Arity), format(string(Text), "~q/~w", [Name, Arity]) ; term_string(Plain, Text) ).

tea_error_line(error(_, stream(_, Line, _, _)), _, Line) :- !.
tea_error_line(error(_, string(_, _)), _, 1) :- !.
tea_error_line(_, Line, Line).

tea_returns(Json) :-
    findall(K-V, return_value(K, V), Pairs),
    maplist(tea_pair_json, Pairs, JsonPairs),
    dict_pairs(Dict, json, JsonPairs),
    with_output_to(string(Json), json_write_dict(current_output, Dict, [width(0)])).

tea_pair_json(K-V, Key-J) :- tea_key(K, Key), tea_json(V, J).

tea_key(K, K) :- atom(K), !.
tea_key(K, A) :- string(K), !, atom_string(A, K).
tea_key(K, A) :- term_to_atom(K, A).

tea_json(V, null) :- var(V), !.
tea_json(V, V) :- ( integer(V) ; string(V) ; atom(V) ), !.
tea_json(V, V) :- float(V), !.
tea_json(V, S) :- number(V), !, term_string(V, S).
tea_json(V, J) :- is_list(V), !, maplist(tea_json, V, J).
tea_json(V, J) :- is_dict(V), !, dict_pairs(V, _, P), maplist(tea_pair_json, P, P2), dict_pairs(J, json, P2).
tea_json(V, S) :- term_string(V, S).

tea_message(tea_load_code_error(Line, Inner), Message) :- !,
    format(string(Message), "tea_load_code/1, line ~w of the code it loads: ~w", [Line, Inner]).
tea_message(tea_refused(format(Format, Args)), Message) :- !, format(string(Message), Format, Args).
tea_message(error(permission_error(call, sandboxed, Goal), Context), Message) :- !,
    tea_indicator(Goal, What),
    (   Context = sandbox(_, Parents), reverse(Parents, Outermost), member(From, Outermost),
        strip_module(From, _, Head), \+ predicate_property(system:Head, iso),
        tea_indicator(From, Through), Through \== What
    ->  format(string(Refused), "~w reaches ~w, which tea's Prolog sandbox does not allow", [Through, What])
    ;   format(string(Refused), "~w is not allowed in tea's Prolog sandbox", [What])
    ),
    format(string(Message), "~w: run: code reaches its state, return/2 and predicates that change nothing outside the run (no files, environment, shell, JavaScript, global flags or other modules)", [Refused]).
tea_message(error(instantiation_error, sandbox(_, _)), Message) :- !,
    Message = "a goal that is unknown until the code runs (call/N or findall/3 of a variable) cannot be checked by tea's sandbox: write the goal out in the code".
tea_message(E, Message) :-
    catch(( '$messages':translate_message(E, Lines, []),
            with_output_to(string(Message), print_message_lines(current_output, '', Lines)) ),
          _, term_string(E, Message)).
`
