// Observation interventions (MLToolBench's Table 6): a diagnostic tool still
// runs and still reports success, but what the agent is shown of its answer is
// changed. `mask` keeps the answer's shape (the same keys, the call's status)
// and withholds every measurement, conclusion and suggestion; `paraphrase`
// keeps every fact and value and changes only the wording of the text. The
// structured part of an answer is left exactly as it was under paraphrase:
// values are the facts, and a reworded number would be a different fact. So a
// policy that reads the structured answer is unaffected by paraphrase by
// construction, and one that reads the prose sees new wording around the same
// numbers.
import { chooseTools, type ToolChoice } from './tools.js';

export type InterventionMode = 'mask' | 'paraphrase';

export interface Intervention {
  mode: InterventionMode;
  /** Whose returns are changed: all tools, one domain's, or named ones. */
  tools: ToolChoice;
  /** Rewords a text (a model); without it the procedural paraphrase below is used. */
  paraphrase?: (tool: string, text: string) => Promise<string>;
  /** Only the return at this turn is changed (a branch of a saved trajectory); unset: every targeted return. */
  at?: number;
}

export interface Shown {
  text: string;
  evidence: Record<string, unknown>;
}

export const WITHHELD = 'unavailable';

/** Whether the intervention applies to this tool's returns (at this turn). */
export function targets(iv: Intervention, tool: string, turn?: number): boolean {
  return (
    (iv.at === undefined || turn === undefined || iv.at === turn) && chooseTools(iv.tools).some((t) => t.name === tool)
  );
}

/**
 * Every leaf of the answer becomes "unavailable"; objects keep their keys, so the answer has the same
 * shape. A list is withheld whole: its length (how many columns have gaps, how many classes) is
 * itself evidence.
 */
export function maskEvidence(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return WITHHELD;
  if (Array.isArray(v)) return WITHHELD;
  return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, maskEvidence(x)]));
}

export function maskAnswer(tool: string, a: Shown): Shown {
  return {
    text: `${tool} ran and finished without error; its measurements, conclusions and suggestions are ${WITHHELD} for this call.`,
    evidence: maskEvidence(a.evidence) as Record<string, unknown>,
  };
}

// Plain-word substitutions; numbers, column names and quoted values are never touched.
const WORDS: Array<[RegExp, string]> = [
  [/\bcolumns\b/g, 'fields'],
  [/\bcolumn\b/g, 'field'],
  [/\bmissing values\b/g, 'gaps'],
  [/\bimages\b/g, 'pictures'],
  [/\bclasses\b/g, 'labels'],
  [/\bnodes\b/g, 'vertices'],
  [/\bfeatures\b/g, 'attributes'],
  [/\brows\b/g, 'records'],
  [/\bratio\b/g, 'quotient'],
  [/\brange\b/g, 'span'],
  [/\bnormalize\b/g, 'standardise'],
  [/\bno resampling needed\b/g, 'resampling is unnecessary'],
];

/**
 * A fixed rewording: the answer's clauses (split at semicolons) are listed one per line under a lead
 * sentence, and common words are swapped for synonyms. Every number and name stays as written, so
 * the facts are the same; the same text always gives the same paraphrase.
 */
export function paraphraseText(tool: string, text: string): string {
  const clauses = text
    .split(/;\s+/)
    .map((c) => c.trim())
    .filter(Boolean);
  const reworded = clauses.map((c) => WORDS.reduce((s, [re, w]) => s.replace(re, w), c));
  return `Findings of ${tool}:\n${reworded.map((c) => `* ${c}`).join('\n')}`;
}

export async function paraphraseAnswer(iv: Intervention, tool: string, a: Shown): Promise<Shown> {
  const text = iv.paraphrase ? await iv.paraphrase(tool, a.text) : paraphraseText(tool, a.text);
  return { text, evidence: a.evidence };
}

export async function intervene(iv: Intervention, tool: string, a: Shown): Promise<Shown> {
  return iv.mode === 'mask' ? maskAnswer(tool, a) : paraphraseAnswer(iv, tool, a);
}

/** The prompt a paraphrasing model gets: reword, keep every value. */
export function paraphrasePrompt(tool: string, text: string): string {
  return `Rewrite this diagnostic report from the tool ${tool} in different words. Keep every number, name and conclusion exactly; change only the wording and order of presentation. Reply with the rewritten report only.\n\n${text}`;
}
