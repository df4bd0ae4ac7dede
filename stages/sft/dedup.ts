// Near-duplicate removal for SFT examples. Two examples are near-duplicates
// when the Jaccard similarity of their sets of word 3-grams ("shingles"),
// taken over the assistant's replies only, is at least the threshold: the
// system prompt and the task text are shared by every trajectory of a task
// and would make all of them look alike. The similarity is estimated with
// MinHash (NUM_HASHES min-hashes; the share of equal ones estimates the
// Jaccard similarity, standard error about sqrt(J(1-J)/NUM_HASHES)), and
// candidate pairs are found with locality-sensitive hashing over bands of the
// signature (32 bands of 4: a pair at similarity 0.5 is a candidate with
// probability 0.87, at 0.7 with 0.9995), so the cost grows with the number of
// examples rather than its square.
// In each cluster the example with the highest rank (improvement over the
// starter, else reward) is kept; ties keep the one read first.
import type { Example } from './examples.js';

export const NUM_HASHES = 128;
const BANDS = 32;
const ROWS = NUM_HASHES / BANDS;
const SHINGLE = 3;

// Fixed odd multipliers and offsets: the same text always gets the same signature.
const SEEDS = Array.from({ length: NUM_HASHES }, (_, i) => [
  (Math.imul(i + 1, 0x9e3779b1) | 1) >>> 0,
  Math.imul(i + 7, 0x85ebca6b) >>> 0,
]);

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

// A 32-bit finaliser (murmur3's): spreads h so that min-hashes of different seeds are near independent.
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The set of word 3-grams (hashed) of the assistant's replies; short texts give their words as one shingle. */
export function shingles(e: Pick<Example, 'messages'>): Set<number> {
  const words = e.messages
    .filter((m) => m.role === 'assistant')
    .map((m) => m.content)
    .join('\n')
    .toLowerCase()
    .split(/\s+/)
    .filter(Boolean);
  const out = new Set<number>();
  if (words.length < SHINGLE) out.add(fnv1a(words.join(' ')));
  for (let i = 0; i + SHINGLE <= words.length; i++) out.add(fnv1a(words.slice(i, i + SHINGLE).join(' ')));
  return out;
}

export function signature(set: ReadonlySet<number>): Uint32Array {
  const sig = new Uint32Array(NUM_HASHES).fill(0xffffffff);
  for (const x of set) {
    for (let i = 0; i < NUM_HASHES; i++) {
      const v = mix((Math.imul(x, SEEDS[i][0]) + SEEDS[i][1]) >>> 0);
      if (v < sig[i]) sig[i] = v;
    }
  }
  return sig;
}

/** The MinHash estimate of the Jaccard similarity of two signatures. */
export function similarity(a: Uint32Array, b: Uint32Array): number {
  let same = 0;
  for (let i = 0; i < NUM_HASHES; i++) if (a[i] === b[i]) same++;
  return same / NUM_HASHES;
}

/** Exact Jaccard similarity of two shingle sets (for tests and small sets). */
export function jaccard(a: ReadonlySet<number>, b: ReadonlySet<number>): number {
  let both = 0;
  for (const x of a) if (b.has(x)) both++;
  const union = a.size + b.size - both;
  return union ? both / union : 1;
}

/**
 * Drops near-duplicates: examples are visited from the highest rank down, and
 * one is kept unless it is at least `threshold` similar to one kept already.
 * The kept examples come back in their original order.
 */
export function dedup<T extends Pick<Example, 'messages' | 'rank'>>(
  examples: readonly T[],
  threshold: number,
): { kept: T[]; removed: number } {
  const order = examples.map((e, i) => ({ e, i })).sort((a, b) => b.e.rank - a.e.rank || a.i - b.i);
  const sigs: Uint32Array[] = [];
  const buckets = new Map<string, number[]>();
  const keep = new Set<number>();
  for (const { e, i } of order) {
    const sig = signature(shingles(e));
    const keys = Array.from({ length: BANDS }, (_, b) => `${b}:${sig.subarray(b * ROWS, (b + 1) * ROWS).join(',')}`);
    const candidates = new Set(keys.flatMap((k) => buckets.get(k) ?? []));
    if ([...candidates].some((j) => similarity(sig, sigs[j]) >= threshold)) continue;
    keep.add(i);
    sigs[i] = sig;
    for (const k of keys) {
      const list = buckets.get(k);
      if (list) list.push(i);
      else buckets.set(k, [i]);
    }
  }
  return { kept: examples.filter((_, i) => keep.has(i)), removed: examples.length - keep.size };
}
