// How promptly limits and stops take effect, measured side by side in one run.
// The tests check that these things happen (a step is killed at its timeout,
// two warm sessions step at once, Ctrl-C stops a run, an unreachable endpoint
// fails the call); how long they take depends on the machine, so it is
// measured here:
//  - a step that sleeps past a 1 s timeout, cold and warm bwrap: its overshoot;
//  - two warm sessions stepping at once against one after the other (ratio);
//  - SIGINT to exit of `mlepipe run` while a shell node sleeps;
//  - an LLM call to a closed port with the client's default retries.
// The last line is one JSON object.
import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LlmClient } from '../agents/llm/client.js';
import { createSandbox, type SandboxConfig } from '../sandbox/index.js';
import { CLI, closedPort, waitFor } from '../test/helpers.js';
import { exists } from '../core/fs.js';
import { resolveModel } from '../core/models.js';

const REPS = Number(process.env.BENCH_REPS ?? 3);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const round = (x: number | null) => (x === null ? null : Math.round(x));

const root = await mkdtemp(join(tmpdir(), 'mlepipe-bench-limits-'));
const task = join(root, 'task');
await mkdir(join(task, 'public'), { recursive: true });
await writeFile(join(task, 'public', 'train.csv'), 'id,y\n1,0\n');

/** Median milliseconds past a 1 s timeout of a step that sleeps for 30 s. */
async function overshoot(label: string, cfg: SandboxConfig): Promise<number | null> {
  const sandbox = createSandbox({ ...cfg, poolSize: 1 });
  try {
    const session = await sandbox.open({ task });
    try {
      await writeFile(join(session.workspace, 'sleep.py'), 'import time\ntime.sleep(30)\n');
      const over: number[] = [];
      for (let i = 0; i < REPS; i++) {
        const t0 = performance.now();
        const r = await session.run({ file: 'sleep.py' }, { timeoutMs: 1000 });
        if (!r.timedOut) throw new Error('the step was not reported as timed out');
        over.push(performance.now() - t0 - 1000);
      }
      console.log(
        `${label.padEnd(28)} median ${median(over).toFixed(0).padStart(6)} ms past a 1 s timeout (max ${Math.max(...over).toFixed(0)}, n=${REPS})`,
      );
      return median(over);
    } finally {
      await session.close();
    }
  } catch (err) {
    console.log(`${label.padEnd(28)} unavailable: ${(err as Error).message}`);
    return null;
  } finally {
    await sandbox.shutdown();
  }
}

/** Two warm sessions each running a 1 s step: both at once, then one after the other. */
async function concurrency(): Promise<{ together: number; apart: number }> {
  const sandbox = createSandbox({ backend: 'bwrap', warm: true, poolSize: 2 });
  try {
    const sessions = await Promise.all([sandbox.open({ task }), sandbox.open({ task })]);
    for (const s of sessions) await writeFile(join(s.workspace, 'step.py'), 'import time\ntime.sleep(1)\n');
    const t0 = performance.now();
    await Promise.all(sessions.map((s) => s.run({ file: 'step.py' })));
    const together = performance.now() - t0;
    const t1 = performance.now();
    for (const s of sessions) await s.run({ file: 'step.py' });
    const apart = performance.now() - t1;
    await Promise.all(sessions.map((s) => s.close()));
    console.log(
      `two warm sessions, 1 s steps: at once ${together.toFixed(0)} ms, one after the other ${apart.toFixed(0)} ms`,
    );
    return { together, apart };
  } finally {
    await sandbox.shutdown();
  }
}

/** Milliseconds from SIGINT to the exit of `mlepipe run` while its shell node sleeps. */
async function stop(): Promise<number> {
  const dir = join(root, 'stop');
  await mkdir(dir);
  await writeFile(join(dir, 'mlepipe.config.yaml'), 'cache: .mlepipe\n');
  await writeFile(
    join(dir, 'e.yaml'),
    'name: stop\nstages:\n  a: { uses: shell, with: { run: "touch started; sleep 300" } }\n',
  );
  const run = execa(process.execPath, [CLI, 'run', 'e.yaml'], {
    cwd: dir,
    reject: false,
    env: { ...process.env, CI: 'true' },
  });
  await waitFor(() => exists(join(dir, 'started')), 60_000, 'the node to start');
  const t0 = performance.now();
  run.kill('SIGINT');
  const r = await run;
  const ms = performance.now() - t0;
  console.log(`SIGINT to exit of mlepipe run    ${ms.toFixed(0)} ms (exit ${r.exitCode})`);
  return ms;
}

/** Milliseconds until a call to a closed port fails, with the client's default retries and backoff. */
async function unreachable(): Promise<number> {
  const port = await closedPort();
  const client = new LlmClient({
    name: 'bench',
    spec: resolveModel({ provider: 'openai', base_url: `http://127.0.0.1:${port}/v1`, model: 'none' }),
  });
  const t0 = performance.now();
  await client.chat({ messages: [{ role: 'user', content: 'hi' }] }).catch(() => undefined);
  const ms = performance.now() - t0;
  console.log(`unreachable endpoint fails after ${ms.toFixed(0)} ms (${client.usage.retries} retries)`);
  return ms;
}

try {
  const cold = await overshoot('bwrap, cold', { backend: 'bwrap' });
  const warm = await overshoot('warm executor (bwrap)', { backend: 'bwrap', warm: true });
  const { together, apart } = await concurrency();
  const stopMs = await stop();
  const llmMs = await unreachable();
  console.log(
    JSON.stringify({
      bench: 'limits',
      timeout_overshoot_bwrap_ms: round(cold),
      timeout_overshoot_warm_ms: round(warm),
      two_sessions_at_once_ms: round(together),
      two_sessions_one_after_other_ms: round(apart),
      concurrency_ratio: Number((together / apart).toFixed(2)),
      sigint_to_exit_ms: round(stopMs),
      unreachable_endpoint_ms: round(llmMs),
    }),
  );
} finally {
  await rm(root, { recursive: true, force: true });
}
