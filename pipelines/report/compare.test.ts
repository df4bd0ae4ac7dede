// Our rows beside the paper's: the join, the difference, the inside-our-interval mark, derived lines, and the same
// in every output (text, Markdown, JSON, CSV) and as a figure's paper layer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveReference } from '../config/reference.js';
import type { ResolvedFigure } from '../config/types.js';
import { figureSpec } from './figure-spec.js';
import { paperPoints } from './compare.js';
import { renderSvg } from './figures.js';
import { renderCsv, renderMarkdown, renderText, tableJson, withComparison, type Table } from './tables.js';

const REF = resolveReference({
  source: 'a paper',
  keys: ['model', 'training'],
  rows: [
    { model: 'M', training: 'Base', any_medal: 20, valid_submission: 70 },
    { model: 'M', training: 'RL', any_medal: 40, valid_submission: null },
    { model: 'Closed', training: null, any_medal: 50, valid_submission: 90 },
  ],
  join: { 'M / Base': 'base', 'M / RL': 'rl' },
  derived: { gain: '100 * (rl - base) / base' },
})!;

/** Two policies with intervals: the paper's 20 lies inside base's [10, 30], its 40 outside rl's [22, 34]. */
function table(): Table {
  const t: Table = {
    columns: ['policy', 'any_medal'],
    labels: ['policy'],
    interval: 'ci',
    reference: REF,
    rows: [
      { policy: 'base', any_medal: 18, any_medal_lo: 10, any_medal_hi: 30 },
      { policy: 'rl', any_medal: 27, any_medal_lo: 22, any_medal_hi: 34 },
    ],
  };
  withComparison(t, REF);
  return t;
}

test('each joined row carries the paper value, ours − paper and whether it lies inside our interval', () => {
  const t = table();
  assert.equal(t.rows[0], {
    ...{ policy: 'base', any_medal: 18, any_medal_lo: 10, any_medal_hi: 30 },
    ...{ any_medal_paper: 20, any_medal_diff: -2, any_medal_inside: true },
  });
  assert.equal([t.rows[1].any_medal_paper, t.rows[1].any_medal_diff, t.rows[1].any_medal_inside], [40, -13, false]);
  // The derived line on both sides: ours (27 − 18) / 18, the paper's (40 − 20) / 20.
  assert.equal(t.rows[2], { policy: 'gain', any_medal: 50, any_medal_paper: 100, any_medal_diff: -50 });
  assert.equal(t.comparison?.compared, ['any_medal'], 'valid_submission is not a column of ours');
  assert.equal(t.comparison?.joined, { base: 'M / Base', rl: 'M / RL' });
  assert.equal(t.comparison?.paperOnly, ['Closed']);
});

test('a row of ours that joins nothing keeps its cells, and no mark is claimed without an interval', () => {
  const t: Table = {
    columns: ['policy', 'any_medal'],
    labels: ['policy'],
    rows: [
      { policy: 'rl', any_medal: 41 },
      { policy: 'other', any_medal: 5 },
    ],
  };
  withComparison(t, REF);
  assert.equal(t.rows[0], { policy: 'rl', any_medal: 41, any_medal_paper: 40, any_medal_diff: 1 });
  assert.equal(t.rows[1], { policy: 'other', any_medal: 5 });
});

test('text and Markdown print ours, the paper, the difference and ✓, then the source and the rows not run here', () => {
  const text = renderText(table()).split('\n');
  assert.match(text[0], /^policy\s+any_medal\s+any_medal \(paper\)\s+any_medal Δ$/);
  assert.match(text[1], /^base\s+18 \[10, 30\]\s+20\s+-2 ✓$/);
  assert.match(text[2], /^rl\s+27 \[22, 34\]\s+40\s+-13$/);
  assert.match(text[3], /^gain\s+50\s+100\s+-50$/);
  assert.equal(text.slice(5), [
    'paper — a paper',
    'Δ = ours − paper; ✓: the paper’s value lies inside our 95% interval',
    'paper only: Closed',
  ]);
  const md = renderMarkdown(table()).split('\n');
  assert.is(md[0], '| policy | any_medal | any_medal (paper) | any_medal Δ |');
  assert.is(md[2], '| base | 18 [10, 30] | 20 | -2 ✓ |');
  assert.ok(md.includes('paper — a paper  '), md.join('\n'));
});

test('JSON and CSV carry the paper value, the difference and the mark as columns of their own', () => {
  const json = tableJson(table()) as { rows: Record<string, unknown>[]; reference: Record<string, unknown> };
  assert.equal(json.rows[0], {
    ...{ policy: 'base', any_medal: 18, any_medal_lo: 10, any_medal_hi: 30 },
    ...{ any_medal_paper: 20, any_medal_diff: -2, any_medal_inside: true },
  });
  assert.equal(json.reference.joined, { base: 'M / Base', rl: 'M / RL' });
  assert.equal(json.reference.paper_only, ['Closed']);
  assert.is((json.reference.rows as unknown[]).length, 3);
  const csv = renderCsv(table()).split('\n');
  assert.is(csv[0], 'policy,any_medal,any_medal_lo,any_medal_hi,any_medal_paper,any_medal_diff,any_medal_inside');
  assert.is(csv[1], 'base,18,10,30,20,-2,true');
  assert.is(csv[3], 'gain,50,,,100,-50,');
});

const FIG: ResolvedFigure = {
  from: 'agents',
  rows: 'policy',
  kind: 'bar',
  x: 'policy',
  y: 'any_medal',
  interval: true,
  logY: false,
  split: true,
  reference: REF,
};

test('a figure draws the paper values at our rows, as a layer with its own legend entry "paper"', async () => {
  const rows = table().rows.slice(0, 2);
  const paper = paperPoints(rows, FIG, REF);
  assert.equal(paper, [
    { policy: 'base', any_medal: 20, source: 'paper' },
    { policy: 'rl', any_medal: 40, source: 'paper' },
  ]);
  const spec = figureSpec(FIG, rows, paper) as { layer: Array<Record<string, any>> };
  const layer = spec.layer.at(-1)!;
  assert.equal(layer.data, { values: paper });
  assert.is(layer.encoding.shape.scale.domain[0], 'paper');
  const svg = await renderSvg(spec);
  assert.ok(svg.includes('>paper</text>'), 'the legend names the paper');
  assert.is([...svg.matchAll(/role-mark[^"]*"[^>]*>/g)].length >= 3, true);
});

test.run();
