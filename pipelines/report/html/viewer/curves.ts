// The training curves of grpo and sft nodes as one faceted Vega-Lite chart per kind.
import type { Curve } from '../data.js';

/** Metrics plotted per training kind, where recorded. */
const CURVE_METRICS: Record<Curve['kind'], { x: string; ys: string[] }> = {
  grpo: {
    x: 'step',
    ys: [
      'reward_mean',
      'valid_rate',
      'median_rate',
      'bronze_rate',
      'format',
      'turns',
      'entropy',
      'val_reward',
      'val_any_medal',
    ],
  },
  sft: { x: 'epoch', ys: ['train_loss', 'val_loss'] },
};

/** One chart per recorded metric of a training kind, a line per variant; null when none was recorded. */
export function curveSpec(kind: Curve['kind'], curves: Curve[]): Record<string, unknown> | null {
  const { x, ys } = CURVE_METRICS[kind];
  const values = curves.flatMap((c) =>
    c.points.flatMap((p) =>
      ys
        .filter((y) => typeof p[y] === 'number')
        .map((y) => ({ variant: c.variant, [x]: p[x], metric: y, value: p[y] })),
    ),
  );
  if (!values.length) return null;
  const metrics = ys.filter((y) => values.some((v) => v.metric === y));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    data: { values },
    facet: { field: 'metric', type: 'nominal', sort: metrics, title: null },
    columns: 3,
    spec: {
      width: 240,
      height: 150,
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: x, type: 'quantitative' },
        y: { field: 'value', type: 'quantitative', title: null },
        color: { field: 'variant', type: 'nominal' },
        tooltip: [{ field: 'variant' }, { field: x }, { field: 'value' }],
      },
    },
    resolve: { scale: { y: 'independent' } },
  };
}
