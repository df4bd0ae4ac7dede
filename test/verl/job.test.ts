// `trainer: verl` through the built CLI against a local Ray head: the node
// submits its export as a Ray job and streams the job's log; killed, then run
// again, it reattaches to the same job instead of submitting another. The
// training itself needs GPUs: on this CPU-only machine the job's entrypoint
// refuses the cluster, the job ends FAILED, and the node fails with the job's
// log in its own. The tests share one cache, so
// their tasks are generated once. The first names its cluster in the project
// settings (ray.address), the second none: it starts a head for the run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { execa } from 'execa';
import { rayCli, startLocalHead } from '../../gpu/verl/job.js';
import { startReplayServer } from '../llm/replay-server.js';
import {
  ROOT,
  cli,
  cliStart,
  nodeKey,
  nodeLog,
  sharedCacheSettings,
  tmpProject,
  waitFor,
  shareTaskNodes,
} from '../helpers.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const EXP = (url: string, address: string) => `name: verl-job
models:
  tiny: { provider: openai, base_url: "${url}", model: tiny-coder, path: Qwen/Qwen3-0.6B, api_key_env: TINY_KEY, timeout_s: 30 }
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 2, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  rl: { uses: grpo, needs: [verified], with: { policy: tiny, trainer: verl, split: all, steps: 1, batch_size: 2, group_size: 4, max_turns: 2, verl: { ray_address: "${address}", gpus_per_node: 1, python: "${join(ROOT, '.venv', 'verl', 'bin', 'python')}" } } }
`;

const { cache, settings } = await sharedCacheSettings();
/** The rl node's log (its last attempt), found by its key: the cache holds the other test's nodes too. */
const rlLog = async (dir: string) => {
  const key = await nodeKey(dir, 'rl', 'e.yaml');
  return () => nodeLog(cache, key);
};

test('a killed run reattaches to its Ray job instead of submitting a second one', async () => {
  const server = await startReplayServer([{ content: '<think>x</think>\n<answer>submission.csv</answer>' }]);
  const head = await startLocalHead({ cpus: 2, log: () => {} });
  try {
    // The cluster is named by the project settings, not the stage.
    const dir = await tmpProject(
      { 'e.yaml': EXP(server.url, '').replace('ray_address: "", ', '') },
      `${settings}ray: { address: "${head.address}" }\n`,
    );
    // The head has a token of its own (token authentication): the CLI is given it as Ray's clients take it.
    const env = { TINY_KEY: 'sk-test', RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN: head.token };
    const log = await rlLog(dir);
    const first = cliStart(['run', 'e.yaml'], { cwd: dir, env });
    let ended = false;
    void first.then(() => (ended = true));
    let id = '';
    await waitFor(
      async () => {
        id = /submitted ray job (\S+)/.exec(await log())?.[1] ?? '';
        // A run that ended without submitting will never submit: say why now, not at the wait's limit.
        if (!id && ended) assert.unreachable(`the run ended before it submitted a job:\n${(await log()).slice(-2000)}`);
        return id !== '';
      },
      300_000,
      'the job to be submitted',
    );
    first.kill('SIGTERM');
    await first;
    const second = await cli(['run', 'e.yaml'], { cwd: dir, env });
    const logs = await log();
    assert.match(logs, `reattached to ray job ${id}`);
    // The rerun's log (a node's log holds its last attempt) submits nothing.
    assert.not.match(logs, 'submitted ray job');
    // The job's own output reached the node's log.
    assert.match(logs, /\[ray\] /);
    const jobs = await execa(rayCli(), ['job', 'list', '--address', head.address], {
      env: { RAY_AUTH_MODE: 'token', RAY_AUTH_TOKEN: head.token },
    });
    assert.is(
      (jobs.stdout + jobs.stderr).match(/submission_id[^,\n]*mlepipe-[0-9a-f]+/g)?.length,
      1,
      jobs.stdout + jobs.stderr,
    );
    // No GPU here: the job cannot train, and the node says how it ended.
    assert.is(second.exitCode, 1);
    const said = second.stdout + second.stderr + logs;
    assert.ok(new RegExp(`ray job ${id} ended (FAILED|STOPPED)`).test(said), said.slice(-3000));
    // It ended at the entrypoint's check, which says what the cluster lacks, not in a placement that never comes.
    assert.match(said, /mlepipe: the Ray cluster has 0 GPUs and 2 CPUs; this run needs 1 GPUs/);
  } finally {
    await head.stop();
    await server.close();
  }
});

test('without a ray_address the node starts a Ray head for the run and stops it afterwards', async () => {
  const server = await startReplayServer([{ content: '<think>x</think>\n<answer>submission.csv</answer>' }]);
  try {
    // No verl.python either: a head started here runs the job with its own Ray's Python (.venv/verl).
    const dir = await tmpProject(
      {
        'e.yaml': EXP(server.url, '')
          .replace('ray_address: "", ', '')
          .replace(/, python: "[^"]*"/, ''),
      },
      settings,
    );
    // The preflight sees no GPU here for a cuda job on a head of this machine, and starts nothing.
    const pre = await cli(['run', 'e.yaml'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
    assert.is(pre.exitCode, 3, pre.stderr);
    assert.match(
      pre.stderr,
      /missing: GPUs 1 × 1 for a Ray head on this machine, which shows 0 \(stages\.rl\.with\.verl\.gpus_per_node/,
    );
    // Started anyway, the job ends at its entrypoint's own check of the cluster.
    const r = await cli(['run', 'e.yaml', '--no-preflight'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });
    const logs = await (await rlLog(dir))();
    const m = /submitted ray job (\S+) to (\S+)/.exec(logs);
    assert.ok(m, logs.slice(-3000));
    assert.is(r.exitCode, 1);
    assert.match(logs, `ray job ${m![1]} ended FAILED`);
    assert.match(logs, /mlepipe: the Ray cluster has 0 GPUs and \d+ CPUs/);
    // The head is gone with the node.
    assert.is(
      await fetch(`${m![2]}/api/version`).then(
        () => 'up',
        () => 'down',
      ),
      'down',
    );
  } finally {
    await server.close();
  }
});

test.run();
