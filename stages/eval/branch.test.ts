// Branching saved runs: which returns can be branched at, a draw that every arm repeats, the replay's
// faithfulness check (run times aside), and a policy that gives the saved replies up to the branch.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { replaying } from '../../agents/policies/replay.js';
import type { Policy, PolicyRequest } from '../../agents/policies/types.js';
import type { TurnRecord } from '../../agents/scaffolds/types.js';
import { branchable, branchTurn, replayMismatches } from './branch.js';

const turn = (over: Partial<TurnRecord>): TurnRecord =>
  ({
    turn: 0,
    action: 'action',
    format_ok: true,
    observation: '',
    exit_code: null,
    timed_out: false,
    duration_ms: 0,
    ...over,
  }) as TurnRecord;

const RUN = {
  task_id: 't1',
  policy: 'scripted:diagnose',
  sample: 0,
  turns: [
    turn({ action: 'action', name: 'List Files', observation: 'train.csv' }),
    turn({ action: 'tool', name: 'detect_missing_values', observation: 'age 30%', evidence: { columns: ['age'] } }),
    turn({ action: 'tool', name: 'check_feature_normalization', observation: 'error: no such file' }),
    turn({ action: 'code', name: 'Execute Script', observation: 'exit code 0 · 1.20 s\n--- stdout ---\nok' }),
    turn({ action: 'tool', name: 'image_normalization_stats', observation: 'mean 0.5', evidence: { mean: [0.5] } }),
  ],
};

test('only answered calls of the chosen tools can be branched; the draw is the same for the same seed and run', () => {
  assert.equal(branchable(RUN, 'all'), [1, 4]);
  assert.equal(branchable(RUN, 'tabular'), [1]);
  assert.equal(branchable(RUN, ['check_feature_normalization']), [], 'a failed call is no return');
  const draws = new Set(Array.from({ length: 5 }, () => branchTurn(RUN, 'all', 3)));
  assert.is(draws.size, 1);
  assert.ok([1, 4].includes([...draws][0]!));
  // Over seeds both returns are drawn.
  assert.equal(new Set(Array.from({ length: 40 }, (_, s) => branchTurn(RUN, 'all', s))), new Set([1, 4]));
  assert.is(branchTurn({ ...RUN, turns: RUN.turns.slice(0, 1) }, 'all', 0), null);
});

test("a replay mismatch is a different observation before the branch; a script's run time is not", () => {
  const replayed = {
    turns: RUN.turns.map((t, i) => (i === 3 ? { ...t, observation: 'exit code 0 · 0.31 s\n--- stdout ---\nok' } : t)),
  };
  assert.is(replayMismatches(RUN, replayed, 5), 0);
  const other = { turns: RUN.turns.map((t, i) => (i === 0 ? { ...t, observation: 'test.csv' } : t)) };
  assert.is(replayMismatches(RUN, other, 5), 1);
  assert.is(replayMismatches(RUN, other, 0), 0);
});

test('the replaying policy gives the saved replies up to the branch, then the policy acts; edits always go to the policy', async () => {
  const asked: string[] = [];
  const policy: Policy = {
    name: 'p',
    kind: 'scripted',
    act: async (req: PolicyRequest) => (
      asked.push(`${req.purpose}${req.turn}`),
      { text: `live ${req.turn}`, usage: { prompt_tokens: 1, completion_tokens: 1 } }
    ),
  } as Policy;
  const p = replaying(policy, ['saved 0', 'saved 1', 'saved 2'], 1);
  const req = (purpose: PolicyRequest['purpose'], t: number) =>
    ({ scaffold: 'mlab', purpose, messages: [], turn: t, sample: 0, history: [] }) as PolicyRequest;
  assert.equal(
    [(await p.act(req('step', 0))).text, (await p.act(req('step', 1))).text, (await p.act(req('step', 2))).text],
    ['saved 0', 'saved 1', 'live 2'],
  );
  assert.is((await p.act(req('edit', 0))).text, 'live 0');
  assert.equal(asked, ['step2', 'edit0']);
  assert.is(p.name, 'p');
});

test.run();
