// "Did you mean" for names typed by hand (stage kinds, parameters, seeds, variables).
import { closest, distance } from 'fastest-levenshtein';

/** ` (did you mean "x"?)` when a known name is close enough to be a typo. */
export function suggestion(word: string, known: readonly string[]): string {
  if (!known.length) return '';
  // A name cut short (`exec` for `execute`) is as likely a slip as a typo.
  const longer =
    word.length >= 3 ? known.filter((k) => k.toLowerCase().startsWith(word.toLowerCase()) && k !== word) : [];
  if (longer.length === 1) return ` (did you mean "${longer[0]}"?)`;
  const best = closest(word, known as string[]);
  const dist = distance(word.toLowerCase(), best.toLowerCase());
  return dist <= Math.max(1, Math.floor(best.length / 3)) && dist < best.length ? ` (did you mean "${best}"?)` : '';
}
