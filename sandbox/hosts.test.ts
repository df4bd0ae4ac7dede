import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineProblem, knownKeys, parseGpus } from './hosts.js';

test('known_hosts: plain and hashed entries (as ssh-keygen -H writes them), [HOST]:PORT for other ports', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-known-'));
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'a')]);
  await execa('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', join(dir, 'b')]);
  const blob = async (k: string) =>
    Buffer.from((await readFile(join(dir, `${k}.pub`), 'utf8')).split(' ')[1], 'base64');
  const [a, b] = [await blob('a'), await blob('b')];
  const line = async (hosts: string, k: string) =>
    `${hosts} ${(await readFile(join(dir, `${k}.pub`), 'utf8')).split(' ').slice(0, 2).join(' ')}`;
  const file = join(dir, 'known_hosts');
  await writeFile(
    file,
    [
      await line('gpu1,10.0.0.7', 'a'),
      await line('[gpu2]:2222', 'b'),
      '# a comment',
      await line('@revoked gpu3', 'a'),
    ].join('\n') + '\n',
  );
  assert.equal(knownKeys(file, 'gpu1', 22), [a]);
  assert.equal(knownKeys(file, '10.0.0.7', 22), [a]);
  assert.equal(knownKeys(file, 'gpu2', 2222), [b]);
  assert.equal(knownKeys(file, 'gpu2', 22), []);
  assert.equal(knownKeys(file, 'gpu3', 22), []);
  await execa('ssh-keygen', ['-H', '-f', file]);
  assert.not.match(await readFile(file, 'utf8'), 'gpu1');
  assert.equal(knownKeys(file, 'gpu1', 22), [a]);
  assert.equal(knownKeys(file, 'gpu2', 2222), [b]);
  assert.equal(knownKeys(file, 'gpu9', 22), []);
  assert.equal(knownKeys(join(dir, 'absent'), 'gpu1', 22), []);
});

test('nvidia-smi output: GPUs with the ones a process computes on marked busy', () => {
  const out = '0, GPU-aa, NVIDIA H200, 143771\n1, GPU-bb, NVIDIA H200, 143771\n---\nGPU-bb\nGPU-bb\n';
  assert.equal(parseGpus(out), [
    { index: '0', name: 'NVIDIA H200', memoryMiB: 143771, busy: false },
    { index: '1', name: 'NVIDIA H200', memoryMiB: 143771, busy: true },
  ]);
  assert.equal(parseGpus('---\n'), []);
});

test('engine errors: TLS and SSH failures point at the setting to check', () => {
  const spec = { docker: 'ssh://me@gpu1:2222', known_hosts: '/k' };
  assert.match(
    engineProblem(
      Object.assign(new Error('self-signed certificate in certificate chain'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' }),
      { docker: 'tcp://h:2376' },
    ),
    /^TLS failed \(SELF_SIGNED_CERT_IN_CHAIN\): check tls/,
  );
  assert.is(
    engineProblem(new Error('Host denied (verification failed)'), spec),
    'the SSH host key of gpu1:2222 is not in /k (check it, then: ssh-keyscan -p 2222 gpu1 >> /k)',
  );
  assert.match(
    engineProblem(
      Object.assign(new Error('All configured authentication methods failed'), { level: 'client-authentication' }),
      spec,
    ),
    /^SSH login as me was refused/,
  );
  assert.is(
    engineProblem(new Error('connect ECONNREFUSED 1.2.3.4:2375\nmore'), { docker: 'tcp://1.2.3.4:2375' }),
    'connect ECONNREFUSED 1.2.3.4:2375',
  );
});

test.run();
