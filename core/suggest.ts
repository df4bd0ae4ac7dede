// "Did you mean" for names typed by hand (stage kinds, parameters, seeds, variables, rewards).

/** ` (did you mean "x"?)` when a known name is close enough to be a typo. */
export function suggestion(word: string, known: readonly string[]): string {
  if (!known.length) return '';
  // A name cut short (`exec` for `execute`) is as likely a slip as a typo.
  const longer =
    word.length >= 3 ? known.filter((k) => k.toLowerCase().startsWith(word.toLowerCase()) && k !== word) : [];
  if (longer.length === 1) return ` (did you mean "${longer[0]}"?)`;
  const scored = known.map((k) => ({ k, d: typoDistance(word.toLowerCase(), k.toLowerCase()) }));
  const best = scored.reduce((a, b) => (b.d < a.d ? b : a));
  if (best.d <= Math.max(1, Math.floor(best.k.length / 3)) && best.d < best.k.length)
    return ` (did you mean "${best.k}"?)`;
  // Two slips in a short name (`mien` for `main`) still read as that name when it keeps its first letter and no
  // other known name is as close.
  const near = scored.filter((s) => s.d <= 2);
  const only = near.length === 1 && near[0].d === 2 ? near[0].k : undefined;
  return only && word.length >= 4 && only.length >= 4 && only[0].toLowerCase() === word[0]?.toLowerCase()
    ? ` (did you mean "${only}"?)`
    : '';
}

/**
 * Edits between two names, counting a swap of neighbouring letters (`glod` for `gold`) as one edit, as it
 * is one slip of the fingers (optimal string alignment distance).
 */
export function typoDistance(a: string, b: string): number {
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j], prev2[j - 2] + 1);
    }
    prev2 = prev;
    prev = row;
  }
  return prev[b.length];
}
