// A unified diff of two texts (three lines of context, hunks headed
// `@@ -a,b +c,d @@`), the form MLAgentBench's edit actions answer with, so an
// agent sees what an edit changed rather than the whole file again.

type Op = [kind: ' ' | '-' | '+', line: string];

/** The line operations turning a into b, by a longest common subsequence (quadratic: scripts are small). */
function ops(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  // Past this many cells the table is not worth its memory: everything is removed, then added.
  if (n * m > 4_000_000) return [...a.map((l) => ['-', l] as Op), ...b.map((l) => ['+', l] as Op)];
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) (out.push([' ', a[i++]]), j++);
    // Removals before additions where either keeps the subsequence, as difflib orders a replacement.
    else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(['-', a[i++]]);
    else out.push(['+', b[j++]]);
  }
  return out;
}

/** A hunk's range as unified diffs write it: `start` alone for one line, `start-1,0` for none. */
const range = (start: number, len: number) =>
  len === 1 ? `${start + 1}` : len === 0 ? `${start},0` : `${start + 1},${len}`;

const split = (t: string) => (t === '' ? [] : t.replace(/\n$/, '').split('\n'));

/** The unified diff of before → after, or '' when they are the same. */
export function unifiedDiff(before: string, after: string, from = 'before', to = 'after', context = 3): string {
  const all = ops(split(before), split(after));
  const changed = all.map((o, k) => (o[0] === ' ' ? -1 : k)).filter((k) => k >= 0);
  if (!changed.length) return '';
  // Hunks: runs of changes less than 2 × context apart share one.
  const hunks: Array<[number, number]> = [];
  for (const k of changed) {
    const last = hunks[hunks.length - 1];
    if (last && k - last[1] <= 2 * context) last[1] = k;
    else hunks.push([k, k]);
  }
  const lines = [`--- ${from}`, `+++ ${to}`];
  for (const [first, lastChange] of hunks) {
    const s = Math.max(0, first - context);
    const e = Math.min(all.length - 1, lastChange + context);
    // Line numbers where the hunk starts in each text: the operations before it that each side holds.
    const aStart = all.slice(0, s).filter((o) => o[0] !== '+').length;
    const bStart = all.slice(0, s).filter((o) => o[0] !== '-').length;
    const body = all.slice(s, e + 1);
    const aLen = body.filter((o) => o[0] !== '+').length;
    const bLen = body.filter((o) => o[0] !== '-').length;
    lines.push(`@@ -${range(aStart, aLen)} +${range(bStart, bLen)} @@`, ...body.map(([k, l]) => k + l));
  }
  return lines.join('\n') + '\n';
}
