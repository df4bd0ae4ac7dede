import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { ResolvedFigure } from '../config/types.js';
import { figureSpec } from './figure-spec.js';
import { renderSvg } from './figures.js';

const fig = (over: Partial<ResolvedFigure>): ResolvedFigure => ({
  from: 'agents',
  rows: 'policy',
  kind: 'bar',
  x: 'policy',
  y: 'any_medal',
  interval: true,
  logY: false,
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

test.run();
