// `uses: ablate`: the compiler has already cloned the target and everything
// downstream once per matrix combination; this node gathers their metrics
// into one comparison table (a row per combination).
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import schema from '../../schemas/stages/ablate.schema.json';
import type { MetricValue, Stage } from '../contract.js';

export interface AblateParams {
  metrics?: string[];
}

export interface AblateTable {
  columns: string[];
  rows: Array<Record<string, MetricValue>>;
}

/** `reward=sparse,lr=0.1`: how a combination reads in ids and tables. */
export function variantLabel(variant: Readonly<Record<string, unknown>>): string {
  return Object.entries(variant)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(',');
}

export const ablate: Stage<AblateParams> = {
  kind: 'ablate',
  version: 1,
  description: "Compare the metrics of a target's variants (target and matrix sit beside uses:).",
  schema,
  flow: { gives: ['table'] },
  // A table of its targets' metrics: no work of its own.
  size: () => ({ work: [], gpus: 0 }),

  async run(ctx) {
    const byVariant = new Map<string, Record<string, MetricValue>>();
    const columns = new Set<string>();
    for (const input of ctx.inputs) {
      const label = variantLabel(input.variant);
      const row = byVariant.get(label) ?? { variant: label };
      for (const [k, v] of Object.entries(input.variant))
        row[k] = typeof v === 'object' ? JSON.stringify(v) : (v as MetricValue);
      for (const [m, v] of Object.entries(input.metrics)) {
        if (ctx.params.metrics && !ctx.params.metrics.includes(m)) continue;
        const col = `${input.name}.${m}`;
        columns.add(col);
        row[col] = v;
      }
      byVariant.set(label, row);
    }
    const keys = Object.keys(ctx.inputs[0]?.variant ?? {});
    const table: AblateTable = { columns: ['variant', ...keys, ...[...columns].sort()], rows: [...byVariant.values()] };
    await writeFile(join(ctx.outDir, 'table.json'), JSON.stringify(table, null, 2) + '\n');
    return { metrics: { variants: table.rows.length } };
  },
};
