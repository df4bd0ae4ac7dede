import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { packageRoot } from './assets.js';
import { sha256 } from './hash.js';
import { choosePython, envCurrent, pythonEnv } from './python.js';
import { interpreterIdentity, pythonIdentity } from './python-identity.js';

/** A package root with a lock and, optionally, an agent environment installed from `stamp`. */
async function root(opts: { venv?: boolean; stamp?: string } = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-pyroot-'));
  await mkdir(join(dir, 'python'));
  await writeFile(join(dir, 'python', 'agent.lock'), 'numpy==2.4.6 \\\n    --hash=sha256:aa\n');
  if (opts.venv) {
    await mkdir(join(dir, '.venv', 'agent', 'bin'), { recursive: true });
    await writeFile(join(dir, '.venv', 'agent', 'bin', 'python'), '');
    await writeFile(join(dir, '.venv', 'agent', 'pyvenv.cfg'), 'home = /usr/bin\nversion = 3.11.2\n');
  }
  if (opts.stamp !== undefined) await writeFile(join(dir, '.venv', 'agent', '.installed-lock'), opts.stamp);
  return dir;
}

test('the package root is where mlepipe’s package.json is, whatever the cwd', () => {
  const r = packageRoot();
  assert.is(JSON.parse(readFileSync(join(r, 'package.json'), 'utf8')).name, 'mlepipe');
  assert.ok(existsSync(join(r, 'python', 'agent.lock')));
});

test('python: in settings comes first, then the installed agent environment', async () => {
  const dir = await root({ venv: true, stamp: 'numpy==2.4.6 \\\n    --hash=sha256:aa\n' });
  assert.equal(choosePython('/opt/py/bin/python3', dir), { path: '/opt/py/bin/python3', source: 'settings' });
  assert.equal(choosePython(undefined, dir), { path: join(dir, '.venv', 'agent', 'bin', 'python'), source: 'agent' });
  assert.ok(envCurrent(pythonEnv('agent', dir)));
});

test('without a finished install, Debian’s interpreter is the fallback, with a note naming the fix', async () => {
  for (const dir of [await root(), await root({ venv: true })]) {
    const c = choosePython(undefined, dir);
    assert.is(c.source, 'system');
    assert.is(c.path, existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
    assert.match(c.note!, `${join(dir, '.venv', 'agent')} is not installed`);
    assert.match(c.note!, `bash ${join(dir, 'scripts', 'setup-python.sh')} agent`);
  }
});

test('the agent environment’s identity is the installed lock’s hash and Python’s major.minor', async () => {
  const lock = 'numpy==2.4.6 \\\n    --hash=sha256:aa\n';
  const dir = await root({ venv: true, stamp: lock });
  const id = await pythonIdentity(choosePython(undefined, dir), dir);
  assert.equal(id, { lock: sha256(lock), python: '3.11' });
  // Another lock installed: another identity, even before the repository's lock is read.
  const other = await root({ venv: true, stamp: lock.replace('2.4.6', '2.4.5') });
  assert.not.equal(await pythonIdentity(choosePython(undefined, other), other), id);
  assert.not.ok(envCurrent(pythonEnv('agent', other)));
});

test('another interpreter is identified by path, version and installed packages; a missing one says so', async () => {
  if (existsSync('/usr/bin/python3')) {
    const id = (await interpreterIdentity('/usr/bin/python3')) as {
      interpreter: string;
      version: string;
      packages: string;
    };
    assert.is(id.interpreter, '/usr/bin/python3');
    assert.match(id.version, /^3\.\d+\.\d+$/);
    assert.match(id.packages, /^[0-9a-f]{64}$/);
    // Probed once: the same answer object comes back.
    assert.is(await interpreterIdentity('/usr/bin/python3'), id);
  }
  assert.equal(await interpreterIdentity('/nonexistent/python3'), {
    interpreter: '/nonexistent/python3',
    unavailable: 'not found',
  });
});

test('the tooling environments collect garbage less often (scripts/setup-python.sh); the agent environment keeps Python’s default', async () => {
  const gen0 = async (name: string) => {
    const python = join(packageRoot(), '.venv', name, 'bin', 'python');
    assert.ok(existsSync(python), `.venv/${name} is not installed: bash scripts/setup-python.sh ${name}`);
    return Number((await execa(python, ['-c', 'import gc; print(gc.get_threshold()[0])'])).stdout);
  };
  for (const name of ['trainer', 'verl', 'logger', 'lint']) assert.is(await gen0(name), 50000, name);
  assert.is(await gen0('agent'), 700);
});

test('every environment is made from Debian’s optimised interpreter when it is the lock’s Python version (scripts/setup-python.sh)', async () => {
  const debian = existsSync('/usr/bin/python3')
    ? (await execa('/usr/bin/python3', ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'])).stdout
    : '';
  const locks: Record<string, string> = {
    agent: 'python/agent.lock',
    trainer: 'gpu/worker/requirements.lock',
    verl: 'python/verl.lock',
    logger: 'python/logger.lock',
    lint: 'python/lint.lock',
  };
  for (const [name, lock] of Object.entries(locks)) {
    const text = readFileSync(join(packageRoot(), lock), 'utf8');
    const want = (/autogenerated by pip-compile with Python (\d+\.\d+)/.exec(text) ??
      /uv pip compile .*--python-version (\d+\.\d+)/.exec(text))?.[1];
    assert.ok(want, `${lock} names no Python version`);
    const base = (
      await execa(join(packageRoot(), '.venv', name, 'bin', 'python'), [
        '-c',
        'import sys; print(sys._base_executable)',
      ])
    ).stdout;
    if (debian === want) assert.match(base, /^\/usr\/bin\/python3/, name);
  }
});

test.run();
