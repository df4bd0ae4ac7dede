// Numeric flags, read one way by every command: the text as typed, a range, and the flag's name in the
// message when the value is outside it.
import { UserError } from '../core/errors.js';

/**
 * An integer flag from `min` to `max`, or undefined when not given. `flag` is the name as typed (`-j`,
 * `--port`); a number passes through (tests call commands with one).
 */
export function integerFlag(
  flag: string,
  text: string | number | undefined,
  min: number,
  max: number,
): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UserError(`${flag} ${text}: must be an integer from ${min} to ${max}`);
  return n;
}

/** A flag that may hold a fraction (seconds, megabytes): a finite number above zero, or undefined when not given. */
export function positiveFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0) throw new UserError(`${flag} ${text}: must be a positive number`);
  return n;
}
