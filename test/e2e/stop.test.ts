// SIGTERM in the middle of an eval stage, through the built CLI: the run
// stops its steps, jails, containers and LLM requests, exits with its
// interrupted code, leaves no process or container behind and no half-written
// cache entry, and a rerun finishes the node.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { startReplayServer, type Reply } from '../llm/replay-server.js';
import { cli, cliStart, tmpProject, waitFor, shareTaskNodes } from '../helpers.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

/** A number no other process on the machine has on its command line. */
const uniqueTag = () => `${700 + Math.floor(Math.random() * 200)}.${Math.floor(Math.random() * 1e6)}`;

const EXP = (url: string, backend: string) => `name: stoppable
models:
  slow: { provider: openai, base_url: "${url}", model: slow-coder, api_key_env: SLOW_KEY, timeout_s: 600 }
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 1, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  agents:
    uses: eval
    needs: [verified]
    with: { policies: [slow], repeats: 2, concurrency: 2, max_turns: 3, step_timeout: 600, time_budget: 3600 }
`;

/** A step that starts a tagged child (visible from the host) and then waits far longer than any test. */
const slowStep = (tag: string): Reply => ({
  content: `<think>Wait.</think>\n\`\`\`python\nimport subprocess, sys, time\nsubprocess.Popen([sys.executable, "-c", "import time; time.sleep(${tag})"])\ntime.sleep(600)\n\`\`\``,
});
/** The tagged child's command line, as a pgrep pattern. */
const tagged = (tag: string) => `time\\.sleep\\(${tag.replace('.', '\\.')}\\)`;

const pids = async (pattern: string) =>
  String((await execa('pgrep', ['-f', pattern], { reject: false })).stdout).trim();
/** Containers this CLI process started (labelled with its pid), running or not. */
const containers = async (pid: number) =>
  String(
    (await execa('docker', ['ps', '-aq', '--filter', `label=mlepipe.pid=${pid}`], { reject: false })).stdout,
  ).trim();
/** Control groups this CLI process made for its jails (named after its pid); none may outlive it. */
async function cgroups(pid: number): Promise<string[]> {
  const found: string[] = [];
  for (const ctl of ['pids', 'memory', '']) {
    const names = await readdir(join('/sys/fs/cgroup', ctl)).catch(() => [] as string[]);
    found.push(...names.filter((n) => n.startsWith(`mlepipe-${pid}-`)).map((n) => join(ctl, n)));
  }
  return found;
}

/** Waits for `cond` while the run goes on; a run that ends first fails the test with its output. */
async function whileRunning(
  run: ReturnType<typeof cliStart>,
  cond: () => Promise<boolean>,
  what: string,
): Promise<void> {
  let ended = false;
  void run.then(() => (ended = true));
  await waitFor(async () => ended || (await cond()), 300_000, what);
  if (ended) {
    const r = await run;
    assert.unreachable(`the run ended (exit ${r.exitCode}) before ${what}:\n${String(r.stderr)}`);
  }
}

async function interrupted(run: ReturnType<typeof cliStart>, dir: string, what: string): Promise<void> {
  const r = await run;
  // Exits by itself with the interrupted code, long before the helper's own timeout would stop it.
  assert.is(r.timedOut, false, `${what}: still running when the helper's timeout came\n${String(r.stderr)}`);
  assert.is(r.exitCode, 130, `${what}: exit ${r.exitCode}\n${String(r.stderr)}`);
  assert.match(String(r.stderr), /agents\s+skipped: interrupted/, String(r.stderr));
  const plan = JSON.parse((await cli(['plan', 'e.yaml', '--json'], { cwd: dir, env: { SLOW_KEY: 'k' } })).stdout);
  assert.equal(
    plan.nodes.map((n: { id: string; action: string }) => `${n.id}:${n.action}`),
    ['tasks:cached', 'verified:cached', 'agents:run'],
    'the interrupted node has no entry',
  );
  assert.equal(await readdir(join(dir, '.mlepipe', 'tmp')).catch(() => []), [], 'no staging folder is left');
}

for (const backend of ['bwrap', 'docker']) {
  test(`SIGTERM while ${backend} steps run: every step, jail${backend === 'docker' ? ', container' : ''} and child stops; a rerun finishes`, async () => {
    const tag = uniqueTag();
    let slow = true;
    // Every turn runs the slow step until the test lets them finish; then the agent answers at once.
    const server = await startReplayServer([
      () => (slow ? slowStep(tag) : { content: '<think>Done.</think>\n<answer>submission.csv</answer>' }),
    ]);
    try {
      const dir = await tmpProject(
        { 'e.yaml': EXP(server.url, backend) },
        `cache: .mlepipe\nsandbox: { backend: ${backend} }\n`,
      );
      const env = { SLOW_KEY: 'k' };
      const run = cliStart(['run', 'e.yaml'], { cwd: dir, env });
      // Both rollouts are inside their steps.
      await whileRunning(
        run,
        async () => (await pids(tagged(tag))).split('\n').filter(Boolean).length >= 2,
        'two steps run',
      );
      const t0 = Date.now();
      process.kill(run.pid!, 'SIGTERM');
      await interrupted(run, dir, backend);
      console.log(`  ${backend}: the CLI exited ${((Date.now() - t0) / 1000).toFixed(1)} s after SIGTERM`);
      await waitFor(async () => (await pids(tagged(tag))) === '', 30_000, 'the steps’ children to die');
      assert.equal(await cgroups(run.pid!), [], 'no jail is left');
      if (backend === 'docker') assert.is(await containers(run.pid!), '', 'no container is left');

      // Replies are cached by request: the rerun's model must be asked again to answer the fast way.
      slow = false;
      await rm(join(dir, '.mlepipe', 'llm'), { recursive: true, force: true });
      const again = await cli(['run', 'e.yaml'], { cwd: dir, env });
      assert.is(again.exitCode, 0, again.stderr);
      assert.match(again.stderr, /1 ran, 2 cached/);
    } finally {
      await server.close();
    }
  });
}

test('SIGTERM while the policy waits for its model: the request is abandoned and the run stops', async () => {
  const server = await startReplayServer([{ delayMs: 600_000, content: 'never sent' }]);
  try {
    const dir = await tmpProject({ 'e.yaml': EXP(server.url, 'bwrap') });
    const run = cliStart(['run', 'e.yaml'], { cwd: dir, env: { SLOW_KEY: 'k' } });
    await whileRunning(run, async () => server.requests.length >= 2, 'both rollouts ask the model');
    process.kill(run.pid!, 'SIGTERM');
    await interrupted(run, dir, 'waiting for the model');
    assert.equal(await cgroups(run.pid!), [], 'no jail is left');
  } finally {
    await server.close();
  }
});

test.run();
