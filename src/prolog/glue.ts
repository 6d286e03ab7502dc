/**
 * The Prolog side of tea's contract with `run:` code and `prolog.query`, consulted once per engine. TEA's runtimes
 * define the same contract (its Prolog guide: `state/2` in, `return/2` out, each clause of the code read by
 * Prolog itself and then asserted or called); this is tea's own text for it, with three differences that make a
 * run repeatable: every run's clauses live in a temporary module that is destroyed afterwards (TEA asserted rules
 * into `user`, where they outlived the node), `return/2` replaces an earlier value of the same key, and DCG rules
 * (`-->`) are translated, not asserted as facts.
 *
 * Values cross as JSON text, never as Prolog source: the state goes in through `atom_json_dict/3` (strings become
 * atoms, objects dicts, null/true/false atoms, as in TEA), the returns come out through `json_write_dict/3`, and
 * `prolog.query`'s facts are built with `=..` from JSON lists, so a hostile string is data and nothing else.
 */

export const GLUE = String.raw`
:- use_module(library(lists)).
:- use_module(library(apply)).
:- use_module(library(aggregate)).
:- use_module(library(clpfd)).
:- use_module(library(modules)).
:- dynamic(state/2).
:- dynamic(return_value/2).

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

% tea_run(+Code, +StateJson, -Outcome): done(Returns) | failed(Line, Returns) | error(Line, Message)
tea_run(Code, StateJson, Outcome) :-
    tea_set_state(StateJson),
    retractall(return_value(_, _)),
    in_temporary_module(M, true, tea_consult(M, Code, run, Status)),
    (   Status = error(Line, E)
    ->  tea_message(E, Message), Outcome = error(Line, Message)
    ;   tea_returns(Returns),
        ( Status = failed(Line) -> Outcome = failed(Line, Returns) ; Outcome = done(Returns) )
    ).

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

% tea_query(+Program, +FactsJson, +Goal, +Max, -Outcome): solutions(Json) | error(Line, Message)
% Line is 0 for an error in the goal itself.
tea_query(Program, FactsJson, Goal, Max, Outcome) :-
    in_temporary_module(M, true, tea_query_in(M, Program, FactsJson, Goal, Max, Status)),
    ( Status = error(Line, E) -> tea_message(E, Message), Outcome = error(Line, Message) ; Outcome = Status ).

tea_query_in(M, Program, FactsJson, GoalText, Max, Status) :-
    atom_json_term(FactsJson, Facts, [value_string_as(atom), null(null), true(true), false(false)]),
    forall(member(F, Facts), ( F = [Name|Args], T =.. [Name|Args], M:assertz(T) )),
    tea_consult(M, Program, program, Loaded),
    (   Loaded = error(_, _) -> Status = Loaded
    ;   catch(tea_solutions(M, GoalText, Max, Status), E, Status = error(0, E))
    ).

tea_solutions(M, GoalText, Max, solutions(Json)) :-
    term_string(Goal, GoalText, [module(M), variable_names(Names)]),
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
tea_clause(_, M, (Head --> Body), true) :- !, dcg_translate_rule((Head --> Body), Clause), M:assertz(Clause).
tea_clause(_, M, (Head :- Body), true) :- !, M:assertz((Head :- Body)).
tea_clause(program, M, Term, true) :- !, M:assertz(Term).
tea_clause(run, M, Term, true) :-
    compound(Term), compound_name_arity(Term, Name, _), \+ tea_goal_name(Name), !,
    M:assertz(Term).
tea_clause(run, M, Term, Ok) :- tea_call(M, Term, Ok).

tea_call(M, Goal, Ok) :- ( call(M:Goal) -> Ok = true ; Ok = false ).

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
tea_message(E, Message) :-
    catch(( '$messages':translate_message(E, Lines, []),
            with_output_to(string(Message), print_message_lines(current_output, '', Lines)) ),
          _, term_string(E, Message)).
`
