/**
 * The template AST. Every expression carries its source span (`s`..`e`, offsets into the template) so that a
 * render error can quote the exact sub-expression at fault (`'state.a' is undefined`).
 */

export type BinaryOp = '+' | '-' | '*' | '/' | '//' | '%' | '**' | '~'
export type CompareOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | 'in' | 'not in'

interface Span {
  s: number
  e: number
}

export type Expr = Span &
  (
    | { k: 'lit'; value: unknown }
    | { k: 'name'; name: string }
    | { k: 'attr'; obj: Expr; key: string | number }
    | { k: 'index'; obj: Expr; index: Expr }
    | { k: 'slice'; obj: Expr; start: Expr | null; stop: Expr | null; step: Expr | null }
    | { k: 'list'; items: Expr[] }
    | { k: 'dict'; entries: Array<[Expr, Expr]> }
    | { k: 'not'; arg: Expr }
    | { k: 'neg' | 'pos'; arg: Expr }
    | { k: 'bin'; op: BinaryOp; l: Expr; r: Expr }
    | { k: 'and' | 'or'; l: Expr; r: Expr }
    | { k: 'cmp'; first: Expr; rest: Array<[CompareOp, Expr]> }
    | { k: 'cond'; test: Expr; then: Expr; else: Expr | null }
    | { k: 'filter'; arg: Expr; name: string; args: Expr[]; kwargs: Array<[string, Expr]>; at: number }
    | { k: 'test'; arg: Expr; name: string; negate: boolean; args: Expr[]; at: number }
  )

export type Stmt =
  | { k: 'text'; value: string }
  | { k: 'out'; expr: Expr }
  | { k: 'if'; branches: Array<{ test: Expr; body: Stmt[] }>; else: Stmt[] | null }
  | { k: 'for'; targets: string[]; iter: Expr; filter: Expr | null; body: Stmt[]; else: Stmt[] | null; s: number }
