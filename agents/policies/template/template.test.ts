// The template policy's replies, sampling and checkpoint checks.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../../core/errors.js';
import { parseReply } from '../../scaffolds/react/parse.js';
import { makePolicy } from '../index.js';
import type { PolicyRequest } from '../types.js';
import { ACTIONS, FEATURE_NAMES, freshCheckpoint, templatePolicy } from './index.js';
import { entropy, probabilities } from './model.js';

const req = (turn: number, over: Partial<PolicyRequest> = {}): PolicyRequest => ({
  scaffold: 'react',
  purpose: 'step',
  messages: [],
  turn,
  sample: 0,
  history: [],
  task: { id: 't', modality: 'tabular', task_type: 'classification', n_train: 100, is_lower_better: false },
  ...over,
});

test('a fresh policy is uniform, seeded, and answers in ReAct format with its choice attached', async () => {
  const ck = freshCheckpoint();
  assert.is(ck.weights.length, ACTIONS.length);
  assert.is(ck.weights[0].length, FEATURE_NAMES.length);
  const p = templatePolicy('template', ck, { seed: 3, maxTurns: 4 });
  const a = await p.act(req(0));
  const b = await p.act(req(0));
  assert.equal(a, b);
  assert.ok(a.choice);
  assert.ok(Math.abs(a.choice!.logprob - Math.log(1 / ACTIONS.length)) < 1e-12);
  assert.ok(Math.abs(a.choice!.entropy - Math.log(ACTIONS.length)) < 1e-12);
  assert.ok(parseReply(a.text).formatOk, a.text);
  // Other samples of the same state draw other actions somewhere.
  const draws = new Set<string>();
  for (let s = 0; s < 20; s++) draws.add((await p.act(req(0, { sample: s }))).choice!.action);
  assert.ok(draws.size > 3);
});

test('weights decide: a large weight on submit makes it certain at temperature 0', async () => {
  const ck = freshCheckpoint();
  ck.weights[ACTIONS.findIndex((a) => a.id === 'submit')][0] = 5;
  const reply = await templatePolicy('t', ck, { temperature: 0, maxTurns: 4 }).act(req(1));
  assert.is(reply.choice!.action, 'submit');
  assert.equal(parseReply(reply.text).action, { kind: 'answer', path: 'submission.csv' });
  assert.ok(entropy(probabilities(ck.weights, reply.choice!.features)) < Math.log(ACTIONS.length));
});

test('the first solving action carries the kit; later ones import it', async () => {
  const ck = freshCheckpoint();
  const forest = ACTIONS.findIndex((a) => a.id === 'forest-large');
  ck.weights[forest][0] = 50;
  const p = templatePolicy('t', ck, { temperature: 0, maxTurns: 4 });
  const first = await p.act(req(0));
  assert.match(first.text, 'def solve(');
  assert.match(first.text, 'solve("forest", keep_best=True, size="large")');
  const view = {
    action: 'code' as const,
    exit_code: 0,
    timed_out: false,
    observation: 'wrote submission.csv (forest)',
    choice: first.choice,
  };
  const second = await p.act(req(1, { history: [view] }));
  assert.match(second.text, 'from mlekit import solve');
  assert.is(second.choice!.features[FEATURE_NAMES.indexOf('last:solve')], 1);
  assert.is(second.choice!.features[FEATURE_NAMES.indexOf('has_submission')], 1);
});

test('a checkpoint from another action set is refused', () => {
  const ck = freshCheckpoint();
  ck.actions = ck.actions.slice(1);
  assert.throws(() => templatePolicy('t', ck, { maxTurns: 4 }), /another version of the template policy/);
});

test('a template:FILE checkpoint that is not JSON is a positioned user error', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-ck-'));
  await writeFile(join(dir, 'ck.json'), '{\n  "weights": [1, 2,]\n}\n');
  try {
    makePolicy('t', { kind: 'template', path: 'ck.json' }, {}, { experimentDir: dir });
    assert.unreachable('accepted');
  } catch (err) {
    assert.instance(err, UserError);
    assert.is((err as Error).message, `${join(dir, 'ck.json')}:2:20: not valid JSON: unexpected "]"`);
  }
});

test.run();
