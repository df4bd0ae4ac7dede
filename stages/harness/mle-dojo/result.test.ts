// MLE-Dojo's grade as the harness stage records it: result.json read field by field, and a run's row taking
// MLE-Dojo's score and HumanRank (no MLE-bench grade, no medals).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runRecord } from '../records.js';
import { readDojoResult } from './result.js';

const valid = {
  competition: 'c',
  solver: 'mleagent',
  exit_code: 0,
  executes: 3,
  steps: 6,
  submissions: 2,
  valid: true,
  journal: 'output/c/agent_history/trajectory.json',
  harness: { best_raw_score: 0.12, best_position_score: 0.99 },
  raw_score: 0.12,
  human_rank: 0.99,
};

test('a valid result reads back; a HumanRank outside [0, 1] or a failed run without its reason does not', () => {
  assert.is(readDojoResult(JSON.stringify(valid), 'r.json').human_rank, 0.99);
  assert.throws(() => readDojoResult(JSON.stringify({ ...valid, human_rank: 99 }), 'r.json'), /human_rank/);
  assert.throws(() => readDojoResult(JSON.stringify({ ...valid, valid: false }), 'r.json'), /failure/);
  assert.throws(() => readDojoResult(JSON.stringify({ ...valid, harness: undefined }), 'r.json'), /harness/);
});

test("a run graded by MLE-Dojo: valid, MLE-Dojo's score and HumanRank, graded without MLE-bench", () => {
  const rec = runRecord({
    task_id: 'c',
    policy: 'p',
    repeat: 0,
    seed: 1,
    duration_s: 1,
    outcome: { submission: '/x/submission.csv', dojo: { score: 0.12, humanRank: 0.99 } },
    submission: 'runs/c/p/0/submission.csv',
    journal: null,
    grade: null,
    leaderboard: { scores: [0.1, 0.2], is_lower_better: true },
  });
  assert.equal(
    [rec.valid_submission, rec.score, rec.human_rank, rec.grade_status, rec.any_medal],
    [true, 0.12, 0.99, 'graded', false],
  );
});

test.run();
