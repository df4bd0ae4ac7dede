// The whole error vocabulary of mlepipe. Everything a user can cause is a
// UserError (exit 2) or an EnvError (exit 3); the CLI entry is the one place
// that catches and prints them. Anything else is a bug and keeps its stack.

/** A place in a source the user wrote: a config file, or a `-S` override. */
export interface SourcePos {
  file: string;
  line: number;
  col: number;
}

/** One diagnostic, printed as `FILE:LINE:COL: path: message`. */
export interface Diagnostic {
  pos?: SourcePos;
  /** Dotted path of the offending value, e.g. `stages.rl.with.reward`. */
  path?: string;
  message: string;
}

export function formatDiagnostic(d: Diagnostic, relativeTo?: (file: string) => string): string {
  const where = d.pos ? `${formatPos(d.pos, relativeTo)}: ` : '';
  const path = d.path ? `${d.path}: ` : '';
  return `${where}${path}${d.message}`;
}

/**
 * `FILE:LINE:COL`; a `-S` argument, whose text is the "file", as `-S KEY=VALUE (column N)`, so that the
 * argument does not run into its position (columns count from the `-` of `-S`, as the argument is shown).
 */
export function formatPos(pos: SourcePos, relativeTo?: (file: string) => string): string {
  if (pos.file.startsWith('-S ')) return `${pos.file} (column ${pos.col})`;
  return `${relativeTo ? relativeTo(pos.file) : pos.file}:${pos.line}:${pos.col}`;
}

/** Exits with a chosen code and message; the base of the two user-facing kinds. */
export class ExitError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'ExitError';
  }
}

/** Invalid input: config, arguments, formulas. Carries every diagnostic found. */
export class UserError extends ExitError {
  readonly diagnostics: Diagnostic[];
  constructor(diagnostics: Diagnostic[] | string) {
    const list = typeof diagnostics === 'string' ? [{ message: diagnostics }] : diagnostics;
    super(2, list.map((d) => formatDiagnostic(d)).join('\n'));
    this.name = 'UserError';
    this.diagnostics = list;
  }
}

/** Something missing from the machine: python, docker, a host. */
export class EnvError extends ExitError {
  constructor(message: string) {
    super(3, message);
    this.name = 'EnvError';
  }
}

/**
 * A host failed under the work placed on it (unreachable, connection lost, container killed there): a node
 * placed there with `on:`, or a run whose sandbox was there, may run elsewhere. It is the environment's
 * fault, never the agent's, so it passes wherever an EnvError does.
 */
export class HostFault extends EnvError {
  constructor(
    readonly host: string,
    message: string,
  ) {
    super(message);
    this.name = 'HostFault';
  }
}

/** A broken invariant inside mlepipe itself; printed with its stack. */
export class InternalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InternalError';
  }
}

/**
 * A stage's complaint about one of its own parameters, found after validation
 * (a dependency file that does not exist). The engine adds the position.
 */
export class ParamError extends UserError {
  constructor(
    readonly param: readonly (string | number)[],
    message: string,
  ) {
    super(message);
    this.name = 'ParamError';
  }
}

/**
 * Work stopped because it was asked to (Ctrl-C, a lost cache lock, a run stopping): not a failure of the
 * work. Code that checks a signal throws it through `signal.throwIfAborted()` or `throw new Interrupted()`.
 */
export class Interrupted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'Interrupted';
  }
}

/**
 * A node's work failed in a way its stage foresaw and can explain (a trainer exited with an error, a
 * subprocess wrote no output, every rollout crashed): reported by its message, which says what to look at.
 * Any other error thrown inside a node is a bug and is logged with its stack.
 */
export class StageFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StageFailure';
  }
}
