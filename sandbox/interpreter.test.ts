import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type Docker from 'dockerode';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '../core/hash.js';
import { checkImage } from './backends/docker.js';
import { AGENT_IN_JAIL, AGENT_LOCK_LABEL, imagePython, jailPython } from './interpreter.js';

/** A virtual environment as `python3 -m venv` makes it: bin/python links to the base interpreter. */
async function venv(dir: string, base = '/usr/bin/python3'): Promise<string> {
  await mkdir(join(dir, 'bin'), { recursive: true });
  await writeFile(join(dir, 'pyvenv.cfg'), `home = /usr/bin\nversion = 3.11.2\n`);
  await symlink(base, join(dir, 'bin', 'python'));
  return join(dir, 'bin', 'python');
}

const withRoot = async (fn: (root: string) => Promise<void>) => {
  const root = await mkdtemp(join(tmpdir(), 'mlepipe-interp-'));
  try {
    await fn(root);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
};

test("an interpreter under /usr is the jail's own", () => {
  assert.equal(jailPython('/usr/bin/python3'), { host: '/usr/bin/python3', path: '/usr/bin/python3', binds: [] });
  assert.equal(imagePython('/usr/bin/python3'), { path: '/usr/bin/python3' });
});

test('the agent environment is mounted at one place, and carries its lock', () =>
  withRoot(async (root) => {
    const dir = join(root, '.venv', 'agent');
    const py = await venv(dir);
    // Not finished installing: no stamp.
    assert.throws(() => jailPython(py, root), /not fully installed.*setup-python\.sh agent/);
    await writeFile(join(dir, '.installed-lock'), 'numpy==2.4.6 --hash=sha256:x\n');
    const jp = jailPython(py, root);
    assert.is(jp.path, `${AGENT_IN_JAIL}/bin/python`);
    assert.equal(jp.binds, [[dir, AGENT_IN_JAIL]]);
    assert.is(jp.agentLock, sha256('numpy==2.4.6 --hash=sha256:x\n'));
    assert.equal(imagePython(py, root), { path: `${AGENT_IN_JAIL}/bin/python`, agentLock: jp.agentLock });
  }));

test('another virtual environment over /usr is mounted under bwrap, and refused by the image', () =>
  withRoot(async (root) => {
    const dir = join(root, 'myenv');
    const py = await venv(dir);
    const jp = jailPython(py, root);
    assert.is(jp.path, '/opt/mlepipe/venv/bin/python');
    assert.equal(jp.binds, [[dir, '/opt/mlepipe/venv']]);
    assert.is(jp.agentLock, undefined);
    assert.throws(() => imagePython(py, root), /carries the agent environment only/);
  }));

test('an interpreter a jail cannot see is refused with the way out', () =>
  withRoot(async (root) => {
    const outside = join(root, 'python3');
    await writeFile(outside, '#!/bin/sh\n', { mode: 0o755 });
    assert.throws(() => jailPython(outside, root), /neither.*python: in mlepipe\.config\.yaml/);
    assert.throws(() => imagePython(outside, root), /not one/);
    // A virtual environment over an interpreter outside /usr is no better.
    const py = await venv(join(root, 'env2'), outside);
    assert.throws(() => jailPython(py, root), /neither/);
  }));

const rejects = async (p: Promise<unknown>, re: RegExp) => {
  const err = await p.then(
    () => undefined,
    (e: Error) => e,
  );
  assert.ok(err, `expected a rejection matching ${re}`);
  assert.match(err!.message, re);
};

/** An engine that knows one image with these labels. */
const engine = (labels: Record<string, string> | null) =>
  ({
    getImage: () => ({
      inspect: async () => {
        if (!labels) throw Object.assign(new Error('no such image'), { statusCode: 404 });
        return { Config: { Labels: labels } };
      },
    }),
  }) as unknown as Docker;

test('the docker image must carry the installed agent lock', async () => {
  const lock = 'a'.repeat(64);
  await checkImage(engine({ [AGENT_LOCK_LABEL]: lock }), 'img', lock);
  // Debian's interpreter needs no agent environment.
  await checkImage(engine({}), 'img');
  await rejects(
    checkImage(engine({}), 'img', lock),
    /has no agent environment; rebuild it with `bash sandbox\/image\/build\.sh img`/,
  );
  await rejects(
    checkImage(engine({ [AGENT_LOCK_LABEL]: 'b'.repeat(64) }), 'img', lock),
    /holds another agent environment \(lock bbbbbbbbbbbb, installed aaaaaaaaaaaa\)/,
  );
  await rejects(checkImage(engine(null), 'img', lock), /not found; build it with/);
});

test.run();
