// The adversarial suite, run against every isolating backend: cold bwrap,
// cold docker, warm executors in both, and cold and warm docker on a host's engine (this
// machine's, reached over TCP as a remote one, as `sandbox: { on: }` reaches
// it), each with the agent environment as its interpreter (mounted read-only
// in bwrap, baked into the image).
// Nothing is skipped: a backend that cannot run here fails its tests.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gradeSubmission } from '../../sandbox/evaluate.js';
import { createSandbox, type Sandbox, type Session, type StepResult } from '../../sandbox/index.js';
import { exists } from '../../core/fs.js';
import { envInstalled, pythonEnv } from '../../core/python.js';
import { ROOT, waitFor } from '../helpers.js';
import { attacks, SECRET } from './attacks.js';
import { engineProxy } from '../hosts/engines.js';
import { engineAt } from '../../sandbox/hosts.js';
import { scaled } from '../helpers.js';

const TIMEOUT_MS = scaled(8000);
const AGENT = pythonEnv('agent');

async function makeTask(): Promise<string> {
  const task = await mkdtemp(join(tmpdir(), 'mlepipe-adv-task-'));
  await mkdir(join(task, 'public'));
  await mkdir(join(task, 'private'));
  await writeFile(join(task, 'public', 'train.csv'), 'id,x,y\n1,0.5,0\n2,0.7,1\n');
  await writeFile(join(task, 'private', 'answer.csv'), `id,y\n1,${SECRET}\n`);
  await writeFile(
    join(task, 'private', 'evaluator.py'),
    'import json, sys\nprint(json.dumps({"score": 1.0, "gold_threshold": 3, "silver_threshold": 2, "bronze_threshold": 1, "median_threshold": 0.5, "is_lower_better": False}))\n',
  );
  return task;
}

async function digest(dir: string): Promise<string> {
  const h = createHash('sha256');
  for (const e of (await readdir(dir, { recursive: true, withFileTypes: true })).sort((a, b) =>
    join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  )) {
    const p = join(e.parentPath, e.name);
    h.update(p);
    if (e.isFile()) h.update(await readFile(p));
  }
  return h.digest('hex');
}

const pgrep = async (pattern: string) =>
  String((await execa('pgrep', ['-f', pattern], { reject: false })).stdout).trim();

for (const [name, backend, warm, onHost] of [
  ['bwrap', 'bwrap', false, false],
  ['warm executor (bwrap)', 'bwrap', true, false],
  ['docker', 'docker', false, false],
  ['warm executor (docker)', 'docker', true, false],
  ['docker on a host', 'docker', false, true],
  ['warm executor on a host', 'docker', true, true],
] as const) {
  const t = suite(`adversarial: ${name}`);
  let task: string;
  let before: string;
  let sandbox: Sandbox;
  let session: Session;
  const interrupt = new AbortController();
  let server: Server;
  let connections = 0;
  let port = 0;
  const tag = `${1000 + Math.floor(Math.random() * 8000)}.5`;
  let A: ReturnType<typeof attacks>;
  let engine: Awaited<ReturnType<typeof engineProxy>> | undefined;

  let lastFile = '';
  // No process of an earlier step can still run (the census lists the dying ones too, for a failure to show).
  const noSurvivors = async () => {
    const c = await step(A.census);
    assert.match(c.stdout, 'OTHERS 0 ', c.stdout + c.stderr);
  };
  const step = async (script: string, over: Record<string, number> = {}): Promise<StepResult> => {
    const file = `attack-${Math.random().toString(36).slice(2, 8)}.py`;
    lastFile = file;
    await writeFile(join(session.workspace, file), script);
    const r = await session.run({ file }, { timeoutMs: TIMEOUT_MS, ...over });
    assert.ok(
      r.durationMs <= (over.timeoutMs ?? TIMEOUT_MS) + scaled(1000),
      `ended within its timeout plus a second (${r.durationMs} ms)`,
    );
    assert.not.ok(`${r.stdout}\n${r.stderr}`.includes(SECRET), `secret leaked:\n${r.stdout}\n${r.stderr}`);
    assert.not.match(r.stdout, /^LEAK/m, r.stdout);
    return r;
  };

  t.before(async () => {
    process.env.MLEPIPE_TEST_HOST_SECRET = SECRET;
    task = await makeTask();
    before = await digest(task);
    server = createServer((sock) => {
      connections++;
      sock.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as { port: number }).port;
    A = attacks(task, port, tag);
    const warnings: string[] = [];
    assert.ok(envInstalled(AGENT), `the agent environment is not installed: ${AGENT.fix}`);
    if (onHost) engine = await engineProxy();
    const where = `tcp://127.0.0.1:${engine?.port}`;
    const host = engine ? { engine: { client: () => engineAt(where), where } } : {};
    sandbox = createSandbox({
      backend,
      warm,
      python: AGENT.python,
      poolSize: 1,
      warn: (m) => warnings.push(m),
      limits: { memoryMb: 1024, maxProcs: 128 },
      ...host,
    });
    session = await sandbox.open({ task, limits: { memoryMb: 1024, maxProcs: 128 }, signal: interrupt.signal });
    assert.is(session.backend, warm ? `warm-${backend}` : backend, `no fallback: ${warnings.join('; ')}`);
  });

  t.after(async () => {
    await session?.close();
    await sandbox?.shutdown();
    server?.close();
    engine?.cut();
  });

  t('reading the answers through relative and absolute paths', async () => {
    const r = await step(A.paths);
    assert.is((r.stdout.match(/^OK: blocked/gm) ?? []).length, 7, r.stdout);
  });

  t('symlinks to the answers, and a submission that is one', async () => {
    const r = await step(A.symlinks);
    assert.is((r.stdout.match(/^OK: blocked/gm) ?? []).length, 3, r.stdout);
    const grade = await gradeSubmission(task, session.workspace, { python: '/usr/bin/python3' });
    assert.is(grade.ok, false);
    // A host's workspace comes back as regular files and folders only: the link stays there.
    assert.match((grade as { error: string }).error, onHost ? 'no submission.csv in the workspace' : 'symbolic link');
  });

  t('/proc/*/root and /proc/*/cwd', async () => {
    const r = await step(A.proc);
    assert.match(r.stdout, 'OK: proc walked');
  });

  t('steps run the agent environment, which they cannot change', async () => {
    const r = await step(A.agentEnv);
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, /^prefix \/opt\/mlepipe\/agent$/m);
    assert.match(r.stdout, /^OK: lightgbm fits$/m);
    // Warm executors import it before the fork (torch only once a step has: test/fixtures/sandbox/warm/modules.test.ts); cold steps import it themselves.
    assert.match(r.stdout, warm ? /^preloaded True$/m : /^preloaded False$/m);
  });

  t('environment variables hold nothing of the host', async () => {
    const r = await step(A.env);
    assert.not.match(r.stdout, 'MLEPIPE_TEST_HOST_SECRET');
    assert.not.match(r.stdout, task);
    assert.match(r.stdout, /^OMP_NUM_THREADS=1$/m);
    for (const k of Object.keys(process.env).filter((k) => /KEY|TOKEN|SECRET/.test(k)))
      assert.not.match(r.stdout, `${k}=`);
  });

  t('walking the filesystem finds no answers', async () => {
    const r = await step(A.walk, { timeoutMs: 60_000 });
    assert.match(r.stdout, 'OK: walked, hits 0');
  });

  t('no network: a loopback listener on the host is unreachable', async () => {
    const r = await step(A.network);
    assert.is((r.stdout.match(/^OK: no connection/gm) ?? []).length, 3, r.stdout);
    assert.is(connections, 0);
  });

  t('an infinite loop is killed at its timeout', async () => {
    const r = await step(A.loop, { timeoutMs: 1000 });
    assert.ok(r.timedOut);
    assert.is(r.exitCode, 124);
  });

  t('detached grandchildren (setsid, nohup, double fork) do not outlive the step', async () => {
    const r = await step(A.daemons, { timeoutMs: scaled(60_000) });
    assert.is(r.exitCode, 0, r.stdout + r.stderr);
    assert.is(r.timedOut, false);
    assert.match(r.stdout, 'OK: daemons started');
    // Checked as soon as the step has returned: it returns once its processes are gone.
    assert.is(await pgrep(`time.sleep\\(${tag.replace('.', '\\.')}\\)`), '', 'no process survives');
    await noSurvivors();
  });

  t('2,000 child processes are capped, and none survive', async () => {
    const r = await step(A.forkbomb, { timeoutMs: scaled(5000) });
    // The last count it printed: SPAWNED once the cap stopped it, or its progress when a loaded machine ended the
    // step at its timeout first. Either way fewer than 2,000 ran, and none may survive.
    const counts = [...r.stdout.matchAll(/(?:SPAWNED|FORKED) (\d+)/g)].map((m) => Number(m[1]));
    const spawned = counts.length ? Math.max(...counts) : 0;
    assert.ok(spawned < 2000 && spawned > 0, `spawned ${spawned}\n${r.stdout}\n${r.stderr}`);
    if (!r.timedOut) assert.match(r.stdout, /stopped at \d+/, 'the process cap ended the forks');
    const file = lastFile;
    assert.is(await pgrep(file), '', 'no forked child survives');
    await noSurvivors();
  });

  t('no process in the jail shows a host path in its command line or environment', async () => {
    const r = await step(A.hostpaths);
    assert.match(r.stdout, 'OK: proc read');
    assert.match(r.stdout, /^PROC 1 cmdline: \S/m, "the jail's init is readable, so the check means something");
    const hostPaths = [
      task,
      session.workspace,
      ROOT,
      process.env.PATH ?? '',
      ...(process.env.PATH ?? '').split(':').filter((d) => d && !/^\/(usr|bin|sbin)\b/.test(d)),
    ];
    const leaks = r.stdout.split('\n').filter((line) => hostPaths.some((h) => h && line.includes(h)));
    assert.equal(
      leaks.map((l) => l.slice(0, 300)),
      [],
      'host paths seen inside the jail',
    );
  });

  t('a memory hog ends as out of memory, with a note, not at its timeout', async () => {
    const r = await step(A.hog, { timeoutMs: 60_000 });
    assert.is(r.oom, true, `${r.exitCode}\n${r.stderr.slice(-500)}`);
    assert.is(r.timedOut, false);
    assert.is.not(r.exitCode, 0);
    assert.match(
      r.stderr,
      /\[mlepipe: the step ran out of memory: it went over its memory cap of 1024 MB and was stopped\]/,
    );
  });

  t('processes that together go over the memory cap end the step as out of memory', async () => {
    const r = await step(A.hogs, { timeoutMs: 60_000 });
    assert.is(r.oom, true, `${r.exitCode}\n${r.stderr.slice(-500)}`);
    assert.is(r.timedOut, false, 'ended at the memory cap, not at the timeout');
    assert.match(r.stderr, 'ran out of memory');
    await noSurvivors();
  });

  t('under fork pressure a 1 s timeout still ends the step, reported as timed out', async () => {
    const t0 = performance.now();
    const r = await step(A.forks, { timeoutMs: 1000 });
    const wall = Math.round(performance.now() - t0);
    assert.is(r.timedOut, true, r.stderr);
    assert.is(r.exitCode, 124);
    assert.match(r.stderr, 'killed after its timeout of 1 s');
    // Recorded, not asserted (bench/sandbox.ts measures it side by side): what a loaded machine adds.
    console.log(`  ${name}: fork pressure, 1 s timeout: result after ${r.durationMs} ms (${wall} ms for the caller)`);
    await noSurvivors();
  });

  t('a 6 GB allocation under a 1 GB cap fails', async () => {
    const r = await step(A.memory);
    assert.ok(/OK: MemoryError/.test(r.stdout) || r.exitCode !== 0, `${r.stdout}\n${r.stderr}`);
  });

  t('200 MB of stdout is truncated with a marker', async () => {
    const r = await step(A.flood, { timeoutMs: 20_000 });
    assert.ok(r.truncated);
    assert.ok(r.stdout.length < 300 * 1024, `kept ${r.stdout.length}`);
    assert.match(r.stdout, /\[mlepipe: output truncated, \d+ more bytes\]$/);
  });

  t('writing into public/, private/ and system paths fails', async () => {
    const r = await step(A.writes);
    assert.is((r.stdout.match(/^OK: cannot/gm) ?? []).length, 15, r.stdout);
  });

  t("the task's files are unchanged and the sandbox still works", async () => {
    assert.is(await digest(task), before);
    // An ordinary solution, not an attack: it trains a model, so it gets an ordinary step's time; the attacks'
    // short bound is for ending them, and a loaded machine (a far engine, verl's CPU run beside) can pass it.
    const r = await step(A.normal, { timeoutMs: scaled(60_000) });
    assert.is(r.exitCode, 0, r.stderr);
    assert.match(r.stdout, 'OK: score 1.0 2');
    const grade = await gradeSubmission(task, session.workspace, { python: '/usr/bin/python3' });
    assert.ok(grade.ok, JSON.stringify(grade));
  });

  // Last: the suite's session is the one interrupted.
  t('an interrupt stops the running step and every process it started, and refuses later steps', async () => {
    const script = `import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(${tag}7)'])\nopen('started', 'w').close()\ntime.sleep(600)\n`;
    await writeFile(join(session.workspace, 'slow.py'), script);
    const running = session.run({ file: 'slow.py' }, { timeoutMs: 600_000 });
    // Its child is running (a host's workspace only comes back when the step ends, so no file can say so).
    const child = `time.sleep\\(${tag.replace('.', '\\.')}7\\)`;
    await waitFor(async () => (await pgrep(child)) !== '', 60_000, 'the step to start');
    interrupt.abort();
    const r = await running;
    assert.is(r.interrupted, true, r.stderr);
    assert.is(r.timedOut, false);
    assert.is(r.exitCode, 130);
    assert.match(r.stderr, 'the run was interrupted');
    await waitFor(async () => (await pgrep(child)) === '', 30_000, "the step's child to die");
    const later = await session.run({ file: 'slow.py' });
    assert.is(later.interrupted, true);
  });

  t.run();
}
