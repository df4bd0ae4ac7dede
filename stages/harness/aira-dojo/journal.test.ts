import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bestNode, harnessScore, type JournalNode } from './journal.js';

const node = (step: number, metric: number | null, over: Partial<JournalNode> = {}): JournalNode => ({
  step,
  code: `# ${step}`,
  metric,
  metric_maximize: true,
  metric_info: { score: step / 10 },
  is_buggy: false,
  ...over,
});

test("aira-dojo's best node: the greatest metric of the good nodes, buggy and metric-less nodes left out", () => {
  const nodes = [node(1, 0.5), node(2, 0.9, { is_buggy: true }), node(3, null), node(4, 0.7)];
  assert.is(bestNode(nodes)?.step, 4);
  assert.is(harnessScore(bestNode(nodes)), 0.4);
});

test('a metric to minimise picks the smallest; the first of equals wins', () => {
  const low = { metric_maximize: false };
  assert.is(bestNode([node(1, 3, low), node(2, 1, low), node(3, 1, low)])?.step, 2);
  assert.is(bestNode([node(1, 2), node(2, 2)])?.step, 1);
});

test('no good node with a metric: no best node, no harness score', () => {
  assert.is(bestNode([node(1, null), node(2, 0.3, { is_buggy: true })]), undefined);
  assert.is(harnessScore(undefined), null);
});

test.run();
