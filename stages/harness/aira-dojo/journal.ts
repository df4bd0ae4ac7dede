// aira-dojo's journal as its greedy solver checkpoints it: one JSON object a line in
// <output_dir>/checkpoint/journal.jsonl, one per node (step, code, metric, metric_maximize, metric_info with the
// grader's test score, is_buggy). The best node is chosen by aira-dojo's rule: among the nodes not marked
// buggy and with a metric, the greatest metric in its direction, the first of equals.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

export const JOURNAL = join('checkpoint', 'journal.jsonl');

export interface JournalNode {
  step: number;
  code: string;
  metric: number | null;
  metric_maximize: boolean | null;
  metric_info: Record<string, unknown> | null;
  is_buggy: boolean | null;
}

export async function readJournal(outputDir: string): Promise<JournalNode[] | undefined> {
  const file = join(outputDir, JOURNAL);
  if (!existsSync(file)) return undefined;
  const nodes: JournalNode[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (!line.trim()) continue;
    // Python's json writes NaN and Infinity as bare tokens; a node's metric may be one.
    nodes.push(JSON.parse(line.replace(/\b(-?Infinity|NaN)\b/g, 'null')) as JournalNode);
  }
  return nodes;
}

/** aira-dojo's get_best_node: greatest metric of the good nodes, in the metric's direction; first of equals. */
export function bestNode(nodes: readonly JournalNode[]): JournalNode | undefined {
  let best: JournalNode | undefined;
  for (const n of nodes) {
    if (n.is_buggy || typeof n.metric !== 'number') continue;
    if (!best) best = n;
    else if (n.metric_maximize === false ? n.metric < best.metric! : n.metric > best.metric!) best = n;
  }
  return best;
}

/** The test score aira-dojo's grader gave a node (metric_info.score), when it graded one. */
export function harnessScore(node: JournalNode | undefined): number | null {
  const s = node?.metric_info?.['score'];
  return typeof s === 'number' ? s : null;
}
