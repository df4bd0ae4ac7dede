// D.1's rules on hand-built runs (the first failed rule is the one counted;
// the gain must beat one baseline std in the metric's direction, which the
// improvement variable already carries), and the embedding deduplication on
// the agent environment's Python: near-copies collapse onto the best run of
// their cluster, other runs and other tasks' runs stay, and an embedding model
// that cannot be loaded falls back to TF-IDF, saying why.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { assetPath } from '../../core/assets.js';
import { pythonEnv } from '../../core/python.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { failedRule } from './run.js';

function run(o: {
  ended?: Trajectory['ended'];
  exit?: number | null;
  valid?: number;
  improvement?: number;
  std?: number | null;
  starter?: number | null;
}): Trajectory {
  return {
    ended: o.ended ?? 'answer',
    turns:
      o.exit === null
        ? []
        : [
            {
              turn: 0,
              action: 'code',
              observation: '',
              exit_code: o.exit ?? 0,
              timed_out: false,
              duration_ms: 1,
              format_ok: true,
            },
          ],
    variables: { valid: o.valid ?? 1, improvement: o.improvement ?? 0.1 },
    evaluation: (o.valid ?? 1) === 1 ? { score: 1 } : null,
    starter_score: o.starter === undefined ? 0.5 : o.starter,
    starter_std: o.std === undefined ? 0.02 : o.std,
  } as unknown as Trajectory;
}

test('D.1 rules: execution, then a valid submission, then a gain beyond one baseline std', () => {
  assert.is(failedRule(run({}), 1), undefined);
  assert.is(failedRule(run({ ended: 'policy_error' }), 1), 'execution');
  assert.is(failedRule(run({ exit: 1, valid: 0 }), 1), 'execution');
  assert.is(failedRule(run({ valid: 0 }), 1), 'valid_submission');
  // A run that never executed a script can still hand in a valid file.
  assert.is(failedRule(run({ exit: null }), 1), undefined);
  assert.is(failedRule(run({ improvement: 0.02 }), 1), 'improvement', 'equal to one std is not more than it');
  assert.is(failedRule(run({ improvement: 0.021 }), 1), undefined);
  assert.is(failedRule(run({ improvement: 0.03 }), 2), 'improvement');
  assert.is(failedRule(run({ improvement: -0.2 }), 1), 'improvement');
  // No recorded spread: any gain; no baseline at all: nothing to beat, so nothing shows a gain.
  assert.is(failedRule(run({ improvement: 0.001, std: null }), 1), undefined);
  assert.is(failedRule(run({ starter: null }), 1), 'improvement');
});

async function dedup(req: Record<string, unknown>): Promise<{ kept: number[]; embedder: string; why: string | null }> {
  const r = await execa(pythonEnv('agent').python, [assetPath('python/embed_dedup.py')], {
    input: JSON.stringify(req),
  });
  return JSON.parse(r.stdout);
}

const A =
  'Action: check_feature_normalization on public/train.csv. The columns differ in scale by orders of magnitude, so standardize them with training statistics and rerun.';
const B =
  'Action: detect_label_imbalance on public/train.csv. Minority classes are rare; use class weights in the classifier and compare per class recall.';

test('TF-IDF deduplication keeps the best run of each cluster, within a task', async () => {
  const texts = [A, A + ' Done.', B, A];
  const out = await dedup({
    texts,
    ranks: [0.1, 0.3, 0.2, 0.5],
    groups: ['t1', 't1', 't1', 't2'],
    threshold: 0.8,
    model: null,
  });
  assert.is(out.embedder, 'tfidf');
  assert.is(out.why, null);
  // 0 and 1 are near-copies: 1 has the larger gain. 2 says something else; 3 is another task's.
  assert.equal(out.kept, [1, 2, 3]);
  const all = await dedup({
    texts,
    ranks: [0.1, 0.3, 0.2, 0.5],
    groups: ['', '', '', ''],
    threshold: 0.8,
    model: null,
  });
  assert.equal(all.kept, [2, 3]);
  const strict = await dedup({
    texts,
    ranks: [0.1, 0.3, 0.2, 0.5],
    groups: ['t1', 't1', 't1', 't2'],
    threshold: 1.0 + 1e-9,
    model: null,
  });
  assert.equal(strict.kept, [0, 1, 2, 3]);
});

test('an embedding model that cannot be loaded falls back to TF-IDF and says why', async () => {
  const out = await dedup({ texts: [A, B], ranks: [1, 0], threshold: 0.9, model: '/nonexistent/model' });
  assert.is(out.embedder, 'tfidf');
  assert.match(out.why ?? '', 'sentence_transformers');
  assert.equal(out.kept, [0, 1]);
});

test.run();
