// What a run reports when a node's work throws. An error the stage foresaw (bad input, something missing
// from the machine, a failed subprocess, a stop) is reported by its message, which says what to look at.
// Anything else is a bug in mlepipe or in the stage: its message alone rarely says where, so its stack
// goes to the node's log and the report says that it is an internal error and where the stack is.
import { inspect } from 'node:util';
import { ExitError, HostFault, Interrupted, StageFailure } from '../../core/errors.js';
import type { NodeLog } from './node-log.js';

export class NodeFailure extends Error {
  constructor(
    message: string,
    readonly logPath: string,
    readonly tail: string[],
    /** The host that failed under the node, when that is why it failed. */
    readonly hostFault?: string,
  ) {
    super(message);
    this.name = 'NodeFailure';
  }
}

/**
 * Whether a stage foresaw the error: one of mlepipe's user-facing kinds, a StageFailure, or cancellation
 * (`signal.throwIfAborted()` throws an AbortError once the node's signal is aborted).
 */
export function isForeseen(err: unknown, signal: AbortSignal): boolean {
  if (err instanceof ExitError || err instanceof StageFailure || err instanceof Interrupted) return true;
  return signal.aborted && err instanceof Error && err.name === 'AbortError';
}

/** The error's class and message, as the user reads them. */
function described(err: unknown): string {
  if (!(err instanceof Error)) return `a thrown ${typeof err}: ${String(err)}`;
  return `${err.name}: ${err.message}`;
}

/**
 * The NodeFailure for an error thrown by a node's stage; `host` is the host the node was placed on. The node's
 * log gets the message, and for an unforeseen error its whole stack (with any cause) too.
 */
export function nodeFailure(err: unknown, log: NodeLog, signal: AbortSignal, host: string | undefined): NodeFailure {
  let message: string;
  if (isForeseen(err, signal)) {
    message = err instanceof Error ? err.message : String(err);
    log.line(`mlepipe: ${message}`);
  } else {
    log.line(`mlepipe: internal error: ${described(err)}`);
    log.detail(inspect(err, { depth: 4 }));
    message = `internal error (please report it): ${described(err)}; its stack is in the node log, ${log.path}`;
  }
  // Only the node's own host makes it a node retry; a sandbox host's fault reached here once no other host was left.
  return new NodeFailure(message, log.path, log.tail, err instanceof HostFault && err.host === host ? host : undefined);
}
