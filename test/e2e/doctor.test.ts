import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cli, packageCopy, tmpProject, type CliResult } from '../helpers.js';

/** `doctor --json` with the process backend and no python: setting, run once for the two tests that read it. */
let plain: Promise<CliResult> | undefined;
const plainDoctor = () =>
  (plain ??= tmpProject({}, 'sandbox: { backend: process }\n').then((cwd) => cli(['doctor', '--json'], { cwd })));

test('doctor finds an interpreter with numpy, pandas and sklearn, and says where it comes from', async () => {
  const r = await plainDoctor();
  const { checks } = JSON.parse(r.stdout);
  const py = checks.find((c: { name: string }) => c.name === 'python');
  assert.ok(py.ok, py.detail);
  assert.match(py.detail, 'numpy, pandas, sklearn');
  assert.match(py.detail, /\((the agent environment|fallback: the agent environment is not installed);/);
  assert.is(r.exitCode, 0);
});

test('doctor says whether the interpreter stages grade with can load MLE-bench’s graders', async () => {
  // The agent environment has MLE-bench's grading requirements; Debian's Python has the numeric stack only.
  const good = JSON.parse((await plainDoctor()).stdout);
  const ok = good.checks.find((c: { name: string }) => c.name === 'mlebench grading');
  assert.ok(ok.ok, ok.detail);
  assert.match(ok.detail, 'py7zr, yaml, tqdm');
  const bare = JSON.parse(
    (
      await cli(['doctor', '--json'], {
        cwd: await tmpProject({}, 'sandbox: { backend: process }\npython: /usr/bin/python3\n'),
      })
    ).stdout,
  );
  const no = bare.checks.find((c: { name: string }) => c.name === 'mlebench grading');
  assert.not.ok(no.ok);
  assert.match(no.detail, "No module named 'py7zr'");
  assert.match(no.fix, 'setup-python.sh agent');
});

test('doctor exits 3 and prints the fix when something required is missing', async () => {
  const dir = await tmpProject({}, 'sandbox: { backend: docker }\npython: /nonexistent/python3\n');
  const r = await cli(['doctor'], { cwd: dir, env: { DOCKER_HOST: 'tcp://127.0.0.1:9' } });
  assert.is(r.exitCode, 3, r.stdout);
  assert.match(r.stdout, /✖ python\s+configured \/nonexistent\/python3: not found/);
  assert.match(r.stdout, 'fix: fix or remove python:');
  assert.match(r.stdout, /✖ docker\s+no engine at tcp:\/\/127.0.0.1:9/);
  assert.match(r.stdout, 'fix: apt-get install -y docker.io');
});

interface Env {
  name: string;
  path: string;
  lock: string;
  installed: boolean;
  current: boolean;
  missing: string[];
  fix?: string;
}

test('doctor reports each Python environment: not installed, then stale and incomplete, with the command that fixes it', async () => {
  const root = await packageCopy();
  const dir = await tmpProject({}, 'sandbox: { backend: process }\n');
  const env = { DOCKER_HOST: 'tcp://127.0.0.1:9' };
  const fix = (name: string) => `bash ${join(root, 'scripts', 'setup-python.sh')} ${name}`;

  let report = JSON.parse((await cli(['doctor', '--json'], { cwd: dir, env, root })).stdout);
  assert.equal(report.python.source, 'system');
  const envs = Object.fromEntries(report.environments.map((e: Env) => [e.name, e])) as Record<string, Env>;
  assert.equal(Object.keys(envs), ['agent', 'trainer', 'verl', 'logger']);
  assert.equal(envs.agent, {
    name: 'agent',
    path: join(root, '.venv', 'agent'),
    python: join(root, '.venv', 'agent', 'bin', 'python'),
    lock: join(root, 'python', 'agent.lock'),
    installed: false,
    current: false,
    missing: [],
    mismatched: [],
    unwanted: [],
    fix: fix('agent'),
  });
  assert.is(envs.trainer.fix, fix('trainer'));
  assert.is(envs.logger.fix, fix('logger'));
  assert.is(envs.verl.fix, fix('verl'));
  const py = report.checks.find((c: { name: string }) => c.name === 'python');
  assert.match(py.detail, 'fallback: the agent environment is not installed');

  // An environment installed from another lock, without the locked packages.
  await execa('/usr/bin/python3', ['-m', 'venv', '--without-pip', join(root, '.venv', 'agent')]);
  await writeFile(join(root, '.venv', 'agent', '.installed-lock'), 'numpy==1.0.0\n');
  report = JSON.parse((await cli(['doctor', '--json'], { cwd: dir, env, root })).stdout);
  const agent = report.environments.find((e: Env) => e.name === 'agent') as Env;
  assert.ok(agent.installed);
  assert.not.ok(agent.current);
  assert.ok(agent.missing.includes('numpy==2.4.6'), agent.missing.join(' '));
  assert.is(agent.fix, fix('agent'));
  assert.equal(report.python, { path: join(root, '.venv', 'agent', 'bin', 'python'), source: 'agent' });

  // Stages would use it, so the python check fails, with the same fix.
  const r = await cli(['doctor'], { cwd: dir, env, root });
  assert.is(r.exitCode, 3, r.stdout);
  assert.match(r.stdout, /✖ python\s+\S+\/\.venv\/agent\/bin\/python: .*No module named 'numpy'/);
  assert.match(r.stdout, /! env agent\s+\S+\/\.venv\/agent: installed from another lock; missing [^\n]*numpy==2\.4\.6/);
  assert.match(r.stdout, `  fix: ${fix('agent')}`);
});

test.run();
