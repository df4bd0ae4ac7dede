// Reward formulas (docs/experiments.md#reward-formulas): a small arithmetic language parsed by recursive
// descent. Never evaluated with eval/Function: rollouts are adversarial, and a
// formula is data from a config file.
import { suggestion } from '../suggest.js';

export type Ast =
  | { t: 'num'; value: number; pos: number }
  | { t: 'var'; name: string; pos: number }
  | { t: 'neg'; arg: Ast; pos: number }
  | { t: 'bin'; op: BinOp; left: Ast; right: Ast; pos: number }
  | { t: 'call'; fn: FnName; args: Ast[]; pos: number };

export type BinOp = '+' | '-' | '*' | '/' | '<' | '<=' | '>' | '>=' | '==' | '!=';
export type FnName = 'min' | 'max' | 'if' | 'clip';

/** Reward variables a formula may use (docs/experiments.md#reward-formulas). */
export const REWARD_VARIABLES = [
  'format',
  'execute',
  'valid',
  'median',
  'bronze',
  'silver',
  'gold',
  'score',
  'improvement',
  'success',
  'turns',
  'reply_chars',
  'timed_out',
] as const;

const ARITY: Record<FnName, [number, number]> = { min: [1, Infinity], max: [1, Infinity], if: [3, 3], clip: [3, 3] };

/** A problem at a 0-based offset into the formula text. */
export class FormulaError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(message);
    this.name = 'FormulaError';
  }
}

interface Tok {
  kind: 'num' | 'id' | 'op' | 'end';
  text: string;
  pos: number;
}

// Sticky patterns match at `lastIndex`, so lexing stays linear in the formula's length.
const NUM = /(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/y;
const ID = /[A-Za-z_][A-Za-z0-9_]*/y;
const OP = /<=|>=|==|!=|[-+*/(),<>]/y;

function lex(src: string): Tok[] {
  const toks: Tok[] = [];
  let i = 0;
  const match = (re: RegExp) => {
    re.lastIndex = i;
    return re.exec(src)?.[0];
  };
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const num = match(NUM);
    const id = num === undefined ? match(ID) : undefined;
    const op = num === undefined && id === undefined ? match(OP) : undefined;
    const text = num ?? id ?? op;
    if (text === undefined) throw new FormulaError(`unexpected character "${c}"`, i);
    toks.push({ kind: num !== undefined ? 'num' : id !== undefined ? 'id' : 'op', text, pos: i });
    i += text.length;
  }
  toks.push({ kind: 'end', text: '', pos: src.length });
  return toks;
}

/**
 * Bounds on a formula's shape: the parser and `evaluate` recurse once per
 * level, so a hostile formula nested thousands deep would overflow the stack.
 */
export const MAX_NESTING = 100;
export const MAX_OPERATORS = 1000;

export function parseFormula(src: string, variables: readonly string[] = REWARD_VARIABLES): Ast {
  const p = new Parser(lex(src), variables);
  const ast = p.comparison();
  const rest = p.peek();
  if (rest.kind !== 'end') throw new FormulaError(`unexpected "${rest.text}"`, rest.pos);
  return ast;
}

/** A recursive-descent parser over the tokens, one method per level of precedence. */
class Parser {
  private k = 0;
  private nesting = 0;
  private operators = 0;

  constructor(
    private readonly toks: readonly Tok[],
    private readonly variables: readonly string[],
  ) {}

  peek(): Tok {
    return this.toks[this.k];
  }

  private next(): Tok {
    return this.toks[this.k++];
  }

  /** Runs `inner` one level deeper (parentheses, a call, a unary minus). */
  private nested<T>(at: Tok, inner: () => T): T {
    if (++this.nesting > MAX_NESTING) throw new FormulaError(`nested more than ${MAX_NESTING} levels deep`, at.pos);
    const r = inner();
    this.nesting--;
    return r;
  }

  /** Counts an operator, a call or an argument separator. */
  private operator(at: Tok): void {
    if (++this.operators > MAX_OPERATORS)
      throw new FormulaError(`formula has more than ${MAX_OPERATORS} operators`, at.pos);
  }

  private expect(text: string): void {
    const t = this.next();
    if (t.text !== text)
      throw new FormulaError(
        t.kind === 'end' ? `expected "${text}" before the end` : `expected "${text}" but found "${t.text}"`,
        t.pos,
      );
  }

  comparison(): Ast {
    const left = this.additive();
    const t = this.peek();
    if (t.kind === 'op' && ['<', '<=', '>', '>=', '==', '!='].includes(t.text)) {
      this.next();
      this.operator(t);
      return { t: 'bin', op: t.text as BinOp, left, right: this.additive(), pos: t.pos };
    }
    return left;
  }

  private additive(): Ast {
    let left = this.multiplicative();
    while (this.peek().text === '+' || this.peek().text === '-') {
      const t = this.next();
      this.operator(t);
      left = { t: 'bin', op: t.text as BinOp, left, right: this.multiplicative(), pos: t.pos };
    }
    return left;
  }

  private multiplicative(): Ast {
    let left = this.unary();
    while (this.peek().text === '*' || this.peek().text === '/') {
      const t = this.next();
      this.operator(t);
      left = { t: 'bin', op: t.text as BinOp, left, right: this.unary(), pos: t.pos };
    }
    return left;
  }

  private unary(): Ast {
    if (this.peek().text === '-') {
      const t = this.next();
      this.operator(t);
      return { t: 'neg', arg: this.nested(t, () => this.unary()), pos: t.pos };
    }
    if (this.peek().text === '+') this.next();
    return this.primary();
  }

  private primary(): Ast {
    const t = this.next();
    if (t.kind === 'num') return { t: 'num', value: Number(t.text), pos: t.pos };
    if (t.text === '(') {
      const e = this.nested(t, () => this.comparison());
      this.expect(')');
      return e;
    }
    if (t.kind === 'id') return this.peek().text === '(' ? this.call(t) : this.variable(t);
    if (t.kind === 'end') throw new FormulaError('formula ends too early', t.pos);
    throw new FormulaError(`unexpected "${t.text}"`, t.pos);
  }

  private call(t: Tok): Ast {
    if (!(t.text in ARITY)) throw new FormulaError(`unknown function "${t.text}" (use min, max, if, clip)`, t.pos);
    this.next();
    this.operator(t);
    const args: Ast[] = [];
    this.nested(t, () => {
      if (this.peek().text === ')') return;
      args.push(this.comparison());
      while (this.peek().text === ',') {
        this.operator(this.next());
        args.push(this.comparison());
      }
    });
    this.expect(')');
    const [lo, hi] = ARITY[t.text as FnName];
    if (args.length < lo || args.length > hi) {
      const want = lo === hi ? `${lo}` : `at least ${lo}`;
      throw new FormulaError(
        `${t.text}() takes ${want} argument${lo === 1 && hi === 1 ? '' : 's'}, got ${args.length}`,
        t.pos,
      );
    }
    return { t: 'call', fn: t.text as FnName, args, pos: t.pos };
  }

  private variable(t: Tok): Ast {
    if (!this.variables.includes(t.text)) {
      throw new FormulaError(
        `unknown variable "${t.text}"${suggestion(t.text, this.variables)} (known: ${this.variables.join(', ')})`,
        t.pos,
      );
    }
    return { t: 'var', name: t.text, pos: t.pos };
  }
}

/** Evaluates a parsed formula; missing variables count as 0, and x/0 is 0 so a reward is never NaN. */
export function evaluate(ast: Ast, vars: Readonly<Record<string, number>>): number {
  switch (ast.t) {
    case 'num':
      return ast.value;
    case 'var':
      return lookup(ast.name, vars);
    case 'neg':
      return -evaluate(ast.arg, vars);
    case 'bin':
      return binary(ast.op, evaluate(ast.left, vars), evaluate(ast.right, vars));
    case 'call': {
      const args = ast.args.map((a) => evaluate(a, vars));
      if (ast.fn === 'min') return Math.min(...args);
      if (ast.fn === 'max') return Math.max(...args);
      if (ast.fn === 'if') return args[0] !== 0 ? args[1] : args[2];
      return Math.min(Math.max(args[0], args[1]), args[2]);
    }
  }
}

// `valid` is another name for `execute` (MLToolBench calls it that).
function lookup(name: string, vars: Readonly<Record<string, number>>): number {
  if (vars[name] !== undefined) return vars[name];
  if (name === 'valid') return vars.execute ?? 0;
  if (name === 'execute') return vars.valid ?? 0;
  return 0;
}

function binary(op: BinOp, a: number, b: number): number {
  switch (op) {
    case '+':
      return a + b;
    case '-':
      return a - b;
    case '*':
      return a * b;
    case '/':
      return b === 0 ? 0 : a / b;
    case '<':
      return Number(a < b);
    case '<=':
      return Number(a <= b);
    case '>':
      return Number(a > b);
    case '>=':
      return Number(a >= b);
    case '==':
      return Number(a === b);
    case '!=':
      return Number(a !== b);
  }
}
