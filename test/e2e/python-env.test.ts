// The agent environment end to end: the fallback is visible in run logs, and
// task generation gives the same bytes in environments built from the lock.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pythonEnv } from '../../core/python.js';
import { TASKGEN_MODULES } from '../../tasks/roles.js';
import { cli, packageCopy, ROOT, tmpProject } from '../helpers.js';

async function logs(dir: string): Promise<string[]> {
  const folder = join(dir, '.mlepipe', 'logs');
  return Promise.all((await readdir(folder)).map((f) => readFile(join(folder, f), 'utf8')));
}

test('without the agent environment, the logs of nodes that run Python say which interpreter they fell back to', async () => {
  const root = await packageCopy();
  const dir = await tmpProject({
    'e.yaml': `name: note
stages:
  py: { uses: shell, with: { run: "$MLEPIPE_PYTHON -c 'import sys; print(\\"ran\\", sys.executable)'" } }
  echo: { uses: shell, with: { run: echo plain } }
`,
  });
  const r = await cli(['run', 'e.yaml'], { cwd: dir, root });
  assert.is(r.exitCode, 0, r.stdout + r.stderr);
  const all = await logs(dir);
  const py = all.find((l) => l.includes('ran '))!;
  const fallback = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  assert.match(
    py,
    `mlepipe: python: ${fallback} (the agent environment ${join(root, '.venv', 'agent')} is not installed; bash ${join(root, 'scripts', 'setup-python.sh')} agent installs it)`,
  );
  const echo = all.find((l) => l.includes('plain'))!;
  assert.not.match(echo, 'mlepipe: python:');
});

// The packages the task generators and evaluators import (numpy, pandas,
// scikit-learn, scipy, pillow) and everything the lock says they need.
const GENERATOR_ROOTS = ['numpy', 'pandas', 'scikit-learn', 'scipy', 'pillow'];

/** The lock's entries (pin, hashes, via comments) for `roots` and their dependencies, as the lock records them. */
function lockSubset(lock: string, roots: readonly string[]): string {
  const blocks = lock.split(/\n(?=[A-Za-z0-9])/).filter((b) => /^[A-Za-z0-9][^=\s]*==/.test(b));
  const name = (b: string) => b.slice(0, b.indexOf('=='));
  const via = (b: string) => [...b.matchAll(/#\s+(?:via\s+)?([A-Za-z0-9][A-Za-z0-9._-]*)\s*$/gm)].map((m) => m[1]);
  const keep = new Set(roots);
  for (let grown = true; grown;) {
    grown = false;
    for (const b of blocks) {
      if (!keep.has(name(b)) && via(b).some((p) => keep.has(p))) {
        keep.add(name(b));
        grown = true;
      }
    }
  }
  return blocks.filter((b) => keep.has(name(b))).join('\n') + '\n';
}

async function generate(python?: string): Promise<Map<string, Buffer>> {
  const settings = `sandbox: { backend: process }\n${python ? `python: ${python}\n` : ''}`;
  const dir = await tmpProject(
    {
      'g.yaml':
        'name: g\nstages:\n  tasks: { uses: generate, with: { backend: procedural, seeds: mlebench, count: 6, seed: 0 } }\n',
    },
    settings,
  );
  const r = await cli(['run', 'g.yaml'], { cwd: dir });
  assert.is(r.exitCode, 0, r.stdout + r.stderr);
  const out = (await cli(['outputs', 'g.yaml', 'tasks'], { cwd: dir })).stdout.trim().split('\n')[0];
  const files = new Map<string, Buffer>();
  for (const f of (await readdir(join(out, 'tasks'), { recursive: true })).sort()) {
    const b = await readFile(join(out, 'tasks', f)).catch(() => undefined);
    if (b) files.set(f, b);
  }
  return files;
}

test('the quick start’s tasks come out byte for byte the same in a fresh environment built from the lock', async () => {
  const agent = pythonEnv('agent', ROOT);
  assert.ok(existsSync(agent.stamp), `the agent environment is not installed: run ${agent.fix}`);
  const fresh = join(await tmpProject({}), 'venv');
  try {
    const subset = lockSubset(await readFile(agent.lock, 'utf8'), GENERATOR_ROOTS);
    assert.ok(subset.includes('\nscikit-learn==') && subset.includes('\nthreadpoolctl=='), subset);
    const lock = `${fresh}.lock`;
    await writeFile(lock, subset);
    // Without a pip of its own (ensurepip's install of one took 2.3 CPU-s): the agent environment's pip installs
    // into it (--python).
    await execa('/usr/bin/python3', ['-m', 'venv', '--without-pip', fresh]);
    // As scripts/setup-python.sh installs: every wheel checked against the lock's hashes. Without byte-compiling
    // every module of the five packages (four times the CPU time of the install itself): what the generator
    // imports is compiled as it is imported, and bytecode cannot change what it writes.
    await execa(agent.python, [
      '-m',
      'pip',
      '--python',
      join(fresh, 'bin', 'python'),
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--require-hashes',
      '--no-deps',
      '--no-compile',
      '-r',
      lock,
    ]);
    await execa(join(fresh, 'bin', 'python'), [join(ROOT, 'python', 'envcheck.py'), lock]);
    // What the generator and its evaluators import, compiled once here: mlepipe's steps and graders run with
    // PYTHONDONTWRITEBYTECODE=1, so in an environment without bytecode every one of them compiled these modules
    // again (the six tasks' generation took 24.4 CPU-s, against 13.7 in the compiled agent environment).
    const { PYTHONDONTWRITEBYTECODE: _, ...writing } = process.env;
    await execa(
      join(fresh, 'bin', 'python'),
      ['-c', `import ${[...TASKGEN_MODULES, 'scipy.stats', 'sklearn.metrics'].join(', ')}`],
      { env: writing, extendEnv: false },
    );

    const ours = await generate(join(fresh, 'bin', 'python'));
    // No python: in settings, so the project's own agent environment runs them.
    const main = await generate();
    assert.ok([...ours.keys()].filter((f) => f.endsWith('task.json')).length >= 4, [...ours.keys()].join(' '));
    assert.equal([...ours.keys()], [...main.keys()]);
    for (const [f, bytes] of ours) assert.ok(bytes.equals(main.get(f)!), `${f} differs`);
  } finally {
    await rm(fresh, { recursive: true, force: true });
  }
});

test.run();
