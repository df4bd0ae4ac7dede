// Shorthands for declaring tools: argument schemas and a spec.
import type { ArgSchema, Domain, ToolSpec } from './types.js';

export const str = (description: string): ArgSchema => ({ type: 'string', description });
export const num = (description: string, dflt?: number): ArgSchema => ({
  type: 'number',
  description,
  ...(dflt === undefined ? {} : { default: dflt }),
});
export const int = (description: string, dflt?: number): ArgSchema => ({
  type: 'integer',
  description,
  minimum: 1,
  ...(dflt === undefined ? {} : { default: dflt }),
});
export const seed: ArgSchema = {
  type: 'integer',
  description: 'random seed (the same seed, the same answer)',
  minimum: 0,
  default: 0,
};
export const list = (description: string): ArgSchema => ({ type: 'array', items: { type: 'string' }, description });

export const file = str('file to read, relative to the workspace (task files are under public/)');
export const table = str('CSV, TSV, JSONL or Parquet file relative to the workspace (e.g. public/train.csv)');
export const target = str('the label column');
export const optTarget = str('the label column, left out of the features');

// A time series is a table's column or one metric of a training log.
export const seriesArgs = {
  path: str('CSV/Parquet file, or a training log'),
  column: str("the table's column (default: its last numeric one)"),
  metric: str('for a log: the metric to read (e.g. val_loss)'),
};

export function def(
  domain: Domain,
  name: string,
  returns: string,
  properties: Record<string, ArgSchema>,
  required: string[],
): ToolSpec {
  return { name, domain, returns, args: { type: 'object', properties, required, additionalProperties: false } };
}
