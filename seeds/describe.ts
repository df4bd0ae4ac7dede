// Seed descriptions for the LLM Data Strategist: a user's MLE-bench data
// directory (<dir>/<id>/prepared/public/description.md) when given, else a
// short statement written from the seed's structural facts.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SeedDna } from './index.js';

const fmt = (n: number) => n.toLocaleString('en-US');

/** A short markdown description of a seed competition from its public facts. */
export function describeSeed(d: SeedDna): string {
  const lines = [
    `# ${d.id}`,
    '',
    `A Kaggle competition (MLE-bench ${d.split} split) on ${d.modality} data: ${d.task_type.replace(/-/g, ' ')}.`,
    `Submissions are scored by ${d.metric.replace(/_/g, ' ')} (${d.is_lower_better ? 'lower' : 'higher'} is better).`,
    `The training data has about ${fmt(d.dataset_stats.sample_count)} samples${d.dataset_stats.is_imbalanced ? ', with imbalanced targets' : ''}.`,
    `The target is a ${d.target_info.type}${d.target_info.cardinality > 1 ? ` with ${fmt(d.target_info.cardinality)} distinct values` : ''}, distributed ${d.target_info.distribution}.`,
  ];
  if (d.tabular)
    lines.push(
      `Rows have ${d.tabular.numeric_features} numeric and ${d.tabular.categorical_features} categorical features (largest cardinality ${fmt(d.tabular.max_cardinality)}).`,
    );
  if (d.image)
    lines.push(`Images are about ${d.image.width}×${d.image.height} pixels with ${d.image.channels} channel(s).`);
  if (d.text) lines.push(`Texts are about ${d.text.mean_words} words long.`);
  if (d.audio)
    lines.push(`Audio clips are sampled at ${fmt(d.audio.sample_rate)} Hz and last about ${d.audio.seconds} s.`);
  if (d.graph) lines.push(`Graphs have about ${fmt(d.graph.nodes)} nodes and ${fmt(d.graph.edges)} edges.`);
  if (d.time_series)
    lines.push(`Series have about ${fmt(d.time_series.length)} steps over ${d.time_series.channels} channel(s).`);
  return lines.join('\n') + '\n';
}

/** The competition's own description from an MLE-bench data directory, else the one written from facts. */
export async function seedDescription(d: SeedDna, mlebenchDir?: string): Promise<string> {
  if (mlebenchDir) {
    const own = await readFile(join(mlebenchDir, d.id, 'prepared', 'public', 'description.md'), 'utf8').catch(
      () => undefined,
    );
    if (own) return own;
  }
  return describeSeed(d);
}
