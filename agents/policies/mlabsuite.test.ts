// The scripted diagnose agent under the paper's interface: on an image task it
// counts the classes with the vision module's tool when the rollout offers the
// task's domain, and reads that tool's answer as it reads the table tool's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chooseTools } from '../scaffolds/mlab/tools.js';
import { issuesFrom, toolCalls } from './mlabsuite.js';

const LISTING = 'images/\nsample_submission.csv\ntest.csv\ntrain.csv\ntrain.py';
const CODE = 'keep = rng.random(len(ytr)) < np.where(ytr < 3, 0.08, 0.9)\n';

test('image task: class_balance_check under tools: domain, detect_label_imbalance where only that is offered', () => {
  const vision = chooseTools('domain', 'vision').map((t) => t.name);
  assert.equal(
    toolCalls(LISTING, CODE, vision).map((c) => c[1]),
    ['image_normalization_stats', 'class_balance_check'],
  );
  assert.equal(
    toolCalls(
      LISTING,
      CODE,
      chooseTools('all').map((t) => t.name),
    ).map((c) => c[1]),
    ['image_normalization_stats', 'class_balance_check'],
  );
  assert.equal(
    toolCalls(LISTING, CODE, ['image_normalization_stats', 'detect_label_imbalance']).map((c) => c[1]),
    ['image_normalization_stats', 'detect_label_imbalance'],
  );
});

test('balanced classes from either tool, subsampled by class in the script: a class-sampling issue', () => {
  for (const tool of ['class_balance_check', 'detect_label_imbalance']) {
    const issues = issuesFrom(CODE, new Map([[tool, { imbalance_ratio: 1.1 }]]));
    assert.ok(
      issues.some((i) => i.kind === 'class-sampling'),
      tool,
    );
  }
  assert.not.ok(
    issuesFrom(CODE, new Map([['class_balance_check', { imbalance_ratio: 4 }]])).some(
      (i) => i.kind === 'class-sampling',
    ),
  );
});

test.run();
