// The mlab scaffold on verl, through the built CLI: a grpo stage with
// scaffold: mlab exports the mlab agent loop (and verl's checks pass on it);
// `mlepipe sandbox serve --export` runs the scaffold itself and hands each
// policy call to the client (/mlab/open, /mlab/reply), so an episode driven
// over HTTP with the replay server's replies takes the same turns, with the
// same observations, as mlepipe's own eval of those replies; /grade grades the
// service's record, not the client's; a failed model call ends the episode as
// a policy error; training rollouts draw their tools under the stage's
// dropout, validation ones get them all. Last, verl's agent loop itself
// (built from the export's agent_loop.yaml, on a rollout server of exact
// tokens) runs an episode against the service: the steps are its token
// record, the AI action's question is sampled outside it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { rolloutTools } from '../../agents/scaffolds/mlab/index.js';
import { readTaskView } from '../../agents/scaffolds/public.js';
import { startReplayServer } from '../llm/replay-server.js';
import { ROOT, cli, outputsOf, readJsonl, tmpProject, shareTaskNodes } from '../helpers.js';
import { serveExport } from './serve-export.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const PY = join(ROOT, '.venv', 'verl', 'bin', 'python');

const EXP = (url: string) => `name: mlab-verl
models:
  tiny: { provider: openai, base_url: "${url}", model: tiny-coder, path: Qwen/Qwen3-0.6B, api_key_env: TINY_KEY, timeout_s: 30 }
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  rl: { uses: grpo, needs: [verified], with: { policy: tiny, trainer: verl-export, scaffold: mlab, tools: tabular, tool_dropout: 0.5, split: all, steps: 1, batch_size: 2, group_size: 4, max_turns: 8, step_timeout: 120, verl: { gpus_per_node: 8 } } }
  own: { uses: eval, needs: [verified], with: { scaffold: mlab, tools: tabular, policies: [tiny], max_turns: 8, step_timeout: 120 } }
`;

const COPY =
  'import pandas as pd\npd.read_csv("public/sample_submission.csv").to_csv("submission.csv", index=False)\nprint("copied")\n';
const step = (action: string, input: unknown) =>
  `Reflection: go on.\nResearch Plan and Status: copy the sample, check the data, submit.\nFact Check: nothing yet.\nThought: next step.\nAction: ${action}\nAction Input: ${JSON.stringify(input)}`;
const EDIT = '```python\n' + COPY + 'print("edited")\n```';
const REPLIES = [
  step('Write File', { file_name: 'solve.py', content: COPY }),
  step('Execute Script', { script_name: 'solve.py' }),
  step('detect_missing_values', { path: 'public/train.csv' }),
  step('Edit Script (AI)', {
    script_name: 'solve.py',
    edit_instruction: 'print "edited" at the end',
    save_name: 'solve2.py',
  }),
  'I am not sure what to do next.',
  step('Final Answer', { final_answer: 'copied the sample submission' }),
];
type Msg = { role: string; content: string };
/** The model: an edit request gets the edited script; a step, the reply for its turn (read from the conversation). */
const MODEL = (body: { messages: Msg[] }) => {
  if (body.messages[0].content.startsWith('Edit this Python script')) return { content: EDIT };
  return { content: REPLIES[Math.min(body.messages.filter((m) => m.role === 'assistant').length, REPLIES.length - 1)] };
};

type Request =
  | { kind: 'step'; turn: number; messages: Msg[]; transcript: Msg[] }
  | { kind: 'ask'; purpose: string; turn: number; messages: Msg[] };
type Turn = { action: string; name?: string; observation: string; exit_code: number | null };
type Episode = {
  scaffold: string;
  ended: string;
  error?: string;
  turns: Turn[];
  messages: Msg[];
  submission: string | null;
};
type Event = { session?: string; request?: Request; done?: Episode };

const server = await startReplayServer([MODEL]);
const dir = await tmpProject({ 'e.yaml': EXP(server.url) });
const made = await cli(['run', 'e.yaml'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
const verl = made.exitCode === 0 ? join(await outputsOf(dir, 'rl'), 'verl') : '';
const evalRequests = server.requests.length;
const own =
  made.exitCode === 0
    ? ((await readJsonl(join(await outputsOf(dir, 'own'), 'trajectories.jsonl'))) as (Episode & { task_id: string })[])
    : [];

async function rows(): Promise<
  Array<{ agent_name: string; prompt: Msg[]; extra_info: { task_id: string; split: string } }>
> {
  const { parquetReadObjects } = await import('hyparquet');
  const buf = await readFile(join(verl, 'data', 'train.parquet'));
  return (await parquetReadObjects({
    file: buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength),
  })) as never;
}

const serve = () => serveExport(verl, dir);

/** Observations with their run times taken out: they differ between two runs of the same step. */
const steady = (turns: Turn[]) =>
  turns.map((t) => [t.action, t.name ?? null, t.observation.replace(/\d+(\.\d+)?\s?m?s\b/g, 'T'), t.exit_code]);

test('the export names the mlab loop, its rows carry the App. E prompt with the tools, and verl checks it', async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const loop = parse(await readFile(join(verl, 'agent_loop.yaml'), 'utf8')) as Array<{
    name: string;
    scaffold?: string;
  }>;
  assert.equal(
    loop.map((e) => [e.name, e.scaffold]),
    [['mlepipe_mlab', 'mlab']],
  );
  const spec = JSON.parse(await readFile(join(verl, 'sandbox.json'), 'utf8')) as {
    scaffold: { name: string; tools: string; tool_dropout: number; max_turns: number };
  };
  assert.equal(
    [spec.scaffold.name, spec.scaffold.tools, spec.scaffold.tool_dropout, spec.scaffold.max_turns],
    ['mlab', 'tabular', 0.5, 8],
  );
  const r = (await rows())[0];
  assert.is(r.agent_name, 'mlepipe_mlab');
  assert.match(r.prompt[0].content, /- Edit Script \(AI\):/);
  assert.match(r.prompt[0].content, /- detect_missing_values \(tabular diagnostic\)/);
  const c = await execa(PY, ['-m', 'mlepipe_verl.check'], { cwd: verl, reject: false });
  assert.is(c.exitCode, 0, c.stderr.slice(-3000));
  const got = JSON.parse(c.stdout.trim().split('\n').pop()!) as { agent_loops: string[]; default_agent_loop: string };
  assert.equal([got.agent_loops, got.default_agent_loop], [['mlepipe_mlab'], 'mlepipe_mlab']);
  // The same stage as a Ray job validates and plans (the verl loop no longer refuses mlab).
  const plan = await cli(['plan', 'e.yaml', '-S', 'stages.rl.with.trainer=verl', '--json'], { cwd: dir });
  assert.is(plan.exitCode, 0, plan.stderr);
});

test("an episode driven over HTTP takes the eval's turns and observations; /grade grades the service's record", async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const svc = await serve();
  try {
    // The ReAct routes are closed: the scaffold runs in the service.
    assert.match(
      String((await svc.post('/open', { task: own[0].task_id }, 400)).error),
      /runs the mlab scaffold: open episodes with \/mlab\/open/,
    );
    for (const ref of own) {
      let event = (await svc.post('/mlab/open', { task: ref.task_id, split: 'val' })) as Event;
      const session = event.session!;
      const first = event.request as Extract<Request, { kind: 'step' }>;
      assert.is(first.kind, 'step');
      // The prompt is the eval's, word for word, and the row's (a validation rollout offers every tool).
      assert.ok(
        server.requests.slice(0, evalRequests).some((q) => q.messages[0].content === first.transcript[0].content),
        'the eval sent the same system prompt',
      );
      assert.equal(first.transcript, (await rows()).find((x) => x.extra_info.task_id === ref.task_id)!.prompt);
      const asked: string[] = [];
      while (!event.done) {
        const req = event.request!;
        if (req.kind === 'ask') asked.push(req.purpose);
        event = (await svc.post('/mlab/reply', { session, text: MODEL({ messages: req.messages }).content })) as Event;
      }
      assert.equal(asked, ['edit']);
      const ep = event.done;
      assert.equal([ep.scaffold, ep.ended, ep.submission], ['mlab', 'answer', ref.submission]);
      assert.equal(steady(ep.turns), steady(ref.turns));
      // The client posts an empty record: the service grades its own.
      const graded = (await svc.post('/grade', {
        session,
        episode: { turns: [], messages: [], submission: null, ended: 'max_turns', split: 'val' },
      })) as { variables: Record<string, number>; evaluation: unknown };
      assert.ok(graded.evaluation, JSON.stringify(graded));
      assert.is(graded.variables.valid, 1);
      assert.is(graded.variables.turns, ref.turns.length);
      assert.match(String((await svc.post('/mlab/reply', { session, text: 'more' }, 400)).error), /no mlab episode/);
    }
  } finally {
    await svc.stop();
  }
});

test("a failed model call ends the episode as a policy error; an action's failed call fails the action; training rollouts draw tools under dropout", async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const svc = await serve();
  try {
    const task = own[0].task_id;
    const failed = (await svc.post('/mlab/open', { task })) as Event;
    const ended = (await svc.post('/mlab/reply', {
      session: failed.session,
      error: 'the rollout server is gone',
    })) as Event;
    assert.equal(
      [ended.done?.ended, ended.done?.error, ended.done?.turns.length],
      ['policy_error', 'the rollout server is gone', 0],
    );
    await svc.post('/close', { session: failed.session });

    // Straight to the AI edit; its model call fails, the action says so, the episode goes on.
    const opened = (await svc.post('/mlab/open', { task })) as Event;
    let event = (await svc.post('/mlab/reply', { session: opened.session, text: REPLIES[3] })) as Event;
    assert.equal([event.request?.kind, (event.request as { purpose?: string }).purpose], ['ask', 'edit']);
    event = (await svc.post('/mlab/reply', { session: opened.session, error: 'sampling failed' })) as Event;
    const next = event.request as Extract<Request, { kind: 'step' }>;
    assert.match(next.transcript[next.transcript.length - 1].content, /^Observation: error: .*sampling failed/);
    await svc.post('/close', { session: opened.session });

    // Tool dropout: each training episode of a task is the next sample of its group (the first two went above).
    const view = await readTaskView(join(verl, 'tasks', task), task);
    const third = (await svc.post('/mlab/open', { task })) as Event;
    const prompt = (third.request as Extract<Request, { kind: 'step' }>).transcript[0].content;
    const offered = (sample: number) =>
      rolloutTools({ tools: 'tabular', toolDropout: 0.5, seed: 0 }, view, 'verl', sample).map((t) => t.name);
    const all = rolloutTools({ tools: 'tabular', toolDropout: 0, seed: 0 }, view, 'verl', 2).map((t) => t.name);
    assert.ok(offered(2).length < all.length, 'dropout removes tools');
    for (const name of all) assert.is(prompt.includes(`- ${name} (`), offered(2).includes(name), name);
    await svc.post('/close', { session: third.session });
  } finally {
    await svc.stop();
  }
});

test("verl's agent loop runs an mlab episode against the service: the steps are its token record, the AI action's question is not", async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const svc = await serve();
  let r;
  try {
    r = await execa(
      PY,
      [
        join(ROOT, 'test', 'verl', 'drive_mlab.py'),
        verl,
        own[0].task_id,
        JSON.stringify([...REPLIES.slice(0, 4), EDIT, ...REPLIES.slice(4)]),
      ],
      { env: { MLEPIPE_SANDBOX_URL: svc.url }, reject: false },
    );
  } finally {
    await svc.stop();
  }
  assert.is(r.exitCode, 0, r.stderr.slice(-3000));
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
    turns: [string, string | null][];
    ended: string;
    reward: number;
    valid: number;
    prompt_is_first_transcript: boolean;
    record_replies: string[];
    side_prompt_is_question_alone: boolean;
    sampled: number;
    observations_in_record: string[];
  };
  assert.equal(out.turns, [
    ['action', 'Write File'],
    ['code', 'Execute Script'],
    ['tool', 'detect_missing_values'],
    ['action', 'Edit Script (AI)'],
    ['invalid', null],
    ['answer', 'Final Answer'],
  ]);
  assert.is(out.ended, 'answer');
  assert.is(out.valid, 1);
  assert.ok(out.prompt_is_first_transcript, "the record starts at the service's prompt");
  // Six steps sampled into the record (mask 1); the edit's question was sampled too, outside it, on its own prompt.
  assert.is(out.sampled, 7);
  assert.equal(out.record_replies, REPLIES);
  assert.ok(out.side_prompt_is_question_alone);
  assert.ok(out.observations_in_record.some((o) => o.includes('The edited file is saved to solve2.py')));
});

test.after(() => server.close());

test.run();
