// AIDE's search policy and its view of the tree, as aideml, aira-dojo and MLE-Dojo all implement it: drafts until
// there are num_drafts; then one draw decides whether to debug (a buggy leaf at most max_debug_depth debug steps
// deep, chosen at random); otherwise the best good node is improved, or a new draft is written while there is none.
import type { AideOptions } from '../types.js';

export type Operator = 'draft' | 'improve' | 'debug';

export interface JournalNode {
  id: number;
  parent: number | null;
  operator: Operator;
  plan: string;
  code: string;
  exit_code: number | null;
  timed_out: boolean;
  duration_ms: number;
  /** The review's metric; null on a buggy node. */
  metric: number | null;
  /** The direction the metric is ranked in (the review's, or the task's). */
  lower_is_better: boolean;
  buggy: boolean;
  /** The review's findings (or proposed fix). */
  analysis: string;
  /** Debug steps in a row that led to this node. */
  debug_depth: number;
  observation: string;
  /** The kept reply held a plan and a code block. */
  format_ok: boolean;
  /** Asks for code repeated because a reply held no plan or no code. */
  retries: number;
  /** The run wrote submission.csv (kept as .aide/node_<id>.csv). */
  submission: boolean;
  /** Milliseconds since the search began, when the node was made. */
  at_ms: number;
}

const isLeaf = (n: JournalNode, nodes: readonly JournalNode[]) => !nodes.some((c) => c.parent === n.id);

/**
 * The best good node: the first one no later node beats, where a node beats another when its metric is better in
 * its own direction (ties keep the earlier one), as Python's max over AIDE's metric values.
 */
export function best(nodes: readonly JournalNode[]): JournalNode | undefined {
  let top: JournalNode | undefined;
  for (const n of nodes) {
    if (n.buggy || n.metric === null) continue;
    if (!top || (n.metric !== top.metric && (n.lower_is_better ? n.metric < top.metric! : n.metric > top.metric!)))
      top = n;
  }
  return top;
}

export interface Step {
  operator: Operator;
  parent?: JournalNode;
}

/** The next step of the search; `random` is drawn once after the drafts, and again to pick the leaf to debug. */
export function nextStep(opts: AideOptions, nodes: readonly JournalNode[], random: () => number): Step {
  if (nodes.filter((n) => n.parent === null).length < opts.numDrafts) return { operator: 'draft' };
  if (random() < opts.debugProb) {
    const leaves = nodes.filter((n) => n.buggy && isLeaf(n, nodes) && n.debug_depth <= opts.maxDebugDepth);
    if (leaves.length) return { operator: 'debug', parent: leaves[Math.floor(random() * leaves.length)] };
  }
  const parent = best(nodes);
  return parent ? { operator: 'improve', parent } : { operator: 'draft' };
}

/** The debug depth of the node a step makes. */
export function depthOf(step: Step, opts: AideOptions): number {
  if (step.operator === 'debug') return step.parent!.debug_depth + 1;
  return step.operator === 'draft' ? (opts.draftDebugDepth ?? 0) : 0;
}

/** What the prompts show of the search so far: each good node's plan, findings and metric, as AIDE's memory. */
export function memory(nodes: readonly JournalNode[]): string {
  return nodes
    .filter((n) => !n.buggy)
    .map((n) => `Design: ${n.plan}\nResults: ${n.analysis}\nValidation metric: ${n.metric}\n`)
    .join('\n-------------------------------\n');
}
