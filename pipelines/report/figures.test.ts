import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ResolvedFigure } from '../config/types.js';
import { figureSpec } from './figure-spec.js';
import { renderSvg, seriesOf } from './figures.js';

const fig = (over: Partial<ResolvedFigure>): ResolvedFigure => ({
  from: 'agents',
  rows: 'policy',
  kind: 'bar',
  x: 'policy',
  y: 'any_medal',
  interval: true,
  logY: false,
  split: true,
  ...over,
});

/** The text of every <text> element, in document order. */
const texts = (svg: string) => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]);
/** The values Vega lists in an axis' or legend's description, in drawing order. */
const described = (svg: string, what: RegExp) => {
  const m = new RegExp(`aria-label="${what.source}[^"]* with \\d+ values: ([^"]*)"`).exec(svg);
  assert.ok(m, `no ${what.source} in the SVG`);
  return m[1].split(', ');
};
/** The fill colours of one mark group's shapes. */
const fills = (svg: string, group: string) => {
  const m = new RegExp(`<g class="mark-rect role-mark ${group}"[^>]*>(.*?)</g>`, 's').exec(svg);
  assert.ok(m, `no ${group} in the SVG`);
  return [...new Set([...m[1].matchAll(/fill="([^"]+)"/g)].map((f) => f[1]))];
};

// Rows as the eval stage publishes them: a policy against itself has no win rate.
const POLICIES = ['scripted:random', 'scripted:majority', 'scripted:linear'];
const WIN_RATE = POLICIES.map((p, i) => ({
  policy: p,
  ...Object.fromEntries(POLICIES.map((q, j) => [q, i === j ? null : 10 * (i + j)])),
  overall: 50,
}));

test('the win-rate heatmap labels a policy against itself with a dash, never "null"', async () => {
  const svg = await renderSvg(
    figureSpec(fig({ rows: 'win_rate', kind: 'heatmap', x: 'opponent', y: 'policy', interval: false }), WIN_RATE),
  );
  assert.not.ok(svg.includes('null'), 'no "null" anywhere in the SVG');
  const cells = texts(svg).slice(0, 9);
  assert.equal(cells, ['—', '10.0', '20.0', '10.0', '—', '30.0', '20.0', '30.0', '—']);
});

test('categorical axes follow the table order, not the alphabet', async () => {
  const heat = await renderSvg(
    figureSpec(fig({ rows: 'win_rate', kind: 'heatmap', x: 'opponent', y: 'policy', interval: false }), WIN_RATE),
  );
  assert.equal(described(heat, /X-axis/), POLICIES);
  assert.equal(described(heat, /Y-axis/), POLICIES);
  const rows = [
    { policy: 'zeta', setting: 'sparse', any_medal: 60 },
    { policy: 'alpha', setting: 'sparse', any_medal: 30 },
    { policy: 'zeta', setting: 'dense', any_medal: 70 },
    { policy: 'mid', setting: 'dense', any_medal: 45 },
  ];
  const bars = await renderSvg(figureSpec(fig({ color: 'setting', interval: false }), rows));
  assert.equal(described(bars, /X-axis/), ['zeta', 'alpha', 'mid']);
  assert.equal(described(bars, /Symbol legend/), ['sparse', 'dense']);
  const box = await renderSvg(figureSpec(fig({ kind: 'box', interval: false }), rows));
  assert.equal(described(box, /X-axis/), ['zeta', 'alpha', 'mid']);
});

test('error bars over bars are drawn in a colour that contrasts with the bars', async () => {
  const rows = [
    { policy: 'a', any_medal: 60, any_medal_lo: 40, any_medal_hi: 80 },
    { policy: 'b', any_medal: 30, any_medal_lo: 10, any_medal_hi: 50 },
  ];
  const svg = await renderSvg(figureSpec(fig({}), rows));
  const [bar] = fills(svg, 'layer_0_marks');
  // The errorbar layer draws its lower and upper caps as thin rects.
  const caps = [...fills(svg, 'layer_1_layer_0_marks'), ...fills(svg, 'layer_1_layer_1_marks')];
  assert.ok(caps.length > 0);
  for (const cap of caps) assert.is.not(cap, bar, 'a lower cap inside its bar must show');
});

// The curves of an ablated stage: each variant's rows share the steps.
const curves = (steps: number[]) =>
  steps.flatMap((step) =>
    ['lr=1', 'lr=2'].map((series, k) => ({ variant: `rl@${series}`, series, step, reward: 0.1 * step + 0.5 * k })),
  );
const CURVE = fig({ rows: 'curve', kind: 'line', x: 'step', y: 'reward', interval: false });
/** The lines drawn, by the description Vega gives each (its first point and series). */
const lines = (svg: string) => [...svg.matchAll(/<path aria-label="([^"]*)"[^>]*aria-roledescription="line mark"/g)];
/** The labels along one axis. */
const ticks = (svg: string, axis: 'X' | 'Y') => {
  const m = new RegExp(`aria-label="${axis}-axis[^"]*"(.*?)</g></g>`, 's').exec(svg);
  assert.ok(m, `no ${axis}-axis in the SVG`);
  return texts(m[1]);
};

test('a line figure of an ablated stage draws one line per variant, not one line jumping between them', async () => {
  const svg = await renderSvg(figureSpec(CURVE, curves([1, 2, 3])));
  assert.is(lines(svg).length, 2);
  assert.equal(described(svg, /Symbol legend/), ['lr=1', 'lr=2']);
  // With a color, each colour's variants still get lines of their own.
  const colored = curves([1, 2, 3]).map((r) => ({ ...r, series: `seed=${r.series}`, arm: 'same' }));
  assert.is(lines(await renderSvg(figureSpec({ ...CURVE, color: 'arm' }, colored))).length, 2);
  // Told otherwise, every row joins one line.
  assert.is(lines(await renderSvg(figureSpec({ ...CURVE, split: false }, curves([1, 2, 3])))).length, 1);
});

test("a variant's series: the matrix values other than the figure's x and color", () => {
  const variant = { 'params.lr': 0.1, seed: 2, 'with.max_turns': 4 };
  assert.is(seriesOf(variant, CURVE), 'params.lr=0.1,seed=2,with.max_turns=4');
  assert.is(seriesOf(variant, { ...CURVE, x: 'max_turns', color: 'lr' }), 'seed=2');
  assert.is(seriesOf(variant, { ...CURVE, x: 'max_turns', color: 'seed' }), 'params.lr=0.1');
  assert.is(seriesOf({ 'with.max_turns': 4 }, { ...CURVE, x: 'max_turns' }), '');
});

test('a line across the variants (x is what the matrix varies) stays one line', async () => {
  const sweep = [2, 4, 8].map((t) => ({ variant: `test@max_turns=${t}`, series: '', max_turns: t, any_medal: 10 * t }));
  const svg = await renderSvg(figureSpec(fig({ kind: 'line', x: 'max_turns', interval: false }), sweep));
  assert.is(lines(svg).length, 1);
});

test('an axis of whole numbers (steps) has ticks at whole numbers only', async () => {
  const svg = await renderSvg(figureSpec(CURVE, curves([1, 2])));
  const xs = ticks(svg, 'X').filter((t) => t !== 'step');
  assert.ok(xs.length >= 2, xs.join(' '));
  for (const t of xs) assert.ok(/^\d+$/.test(t), `tick ${t} on the step axis`);
  // Fractional values keep fractional ticks.
  assert.ok(ticks(svg, 'Y').some((t) => t.includes('.')));
});

test.run();
