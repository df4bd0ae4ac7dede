import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { loadExperiment } from './load.js';

const HOSTS =
  'hosts:\n  big: { docker: "tcp://127.0.0.1:2375", gpus: 2, labels: [h200] }\n  cpu: { docker: "unix:///var/run/docker.sock" }\n';

async function load(settings: string, experiment: string, overrides: string[] = []) {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-hosts-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), settings);
  await writeFile(join(dir, 'e.yaml'), experiment);
  try {
    return { exp: await loadExperiment(join(dir, 'e.yaml'), { env: {}, overrides }), errors: [] as string[], dir };
  } catch (err) {
    assert.instance(err, UserError);
    return {
      exp: undefined,
      dir,
      errors: (err as UserError).diagnostics.map(
        (d) => `${d.pos?.file?.split('/').pop()}:${d.pos?.line}:${d.pos?.col} ${d.path}: ${d.message}`,
      ),
    };
  }
}

test('on: a host name or a label; gpus default to 1 on GPU hosts and to 0 on CPU hosts and locally', async () => {
  const { exp, errors } = await load(
    HOSTS,
    'name: e\nstages:\n  a: { uses: shell, with: { run: x }, on: h200 }\n  b: { uses: shell, with: { run: x }, on: cpu }\n  c: { uses: shell, with: { run: x } }\n',
  );
  assert.equal(errors, []);
  assert.equal(
    exp!.stages.map((s) => [s.id, s.on, s.gpus]),
    [
      ['a', 'h200', 1],
      ['b', 'cpu', 0],
      ['c', undefined, 0],
    ],
  );
  assert.is(exp!.settings.hosts.big.gpus, 2);
});

test('an unknown host or label, and more GPUs than any matching host lends, are positioned errors', async () => {
  const { errors } = await load(
    HOSTS,
    'name: e\nstages:\n  a: { uses: shell, with: { run: x }, on: h100 }\n  b: { uses: shell, with: { run: x }, on: h200, gpus: 3 }\n  c: { uses: shell, with: { run: x }, on: cpu, gpus: 1 }\n  d: { uses: shell, with: { run: x }, gpus: 1 }\n',
  );
  assert.equal(errors, [
    'e.yaml:3:43 stages.a.on: no host named or labelled "h100" in ' +
      errors[0].split(' in ')[1].split(' ')[0] +
      ' (did you mean "h200"?) (hosts: big, cpu)',
    'e.yaml:4:55 stages.b.gpus: asks for 3 GPU(s), but big lends 2',
    'e.yaml:5:54 stages.c.gpus: asks for 1 GPU(s), but cpu lends 0',
    'e.yaml:6:45 stages.d.gpus: gpus: is taken on a host: set on: as well (local nodes use this machine as it is)',
  ]);
});

test('a node that starts a trainer worker may not ask for more than one GPU: the worker uses cuda:0 alone', async () => {
  const models = 'models:\n  m: { provider: worker, path: m, model: m, lora_rank: 0 }\n';
  const { errors } = await load(
    HOSTS,
    `name: e\n${models}stages:\n  tasks: { uses: generate, with: { seeds: mlebench, count: 2 } }\n  split: { uses: filter, needs: [tasks] }\n  rl: { uses: grpo, needs: [split], on: h200, gpus: 2, with: { policy: m, trainer: worker } }\n  ft: { uses: sft, needs: [rl], on: h200, gpus: 2, with: { model: m } }\n  ev: { uses: eval, needs: [tasks], on: h200, gpus: 2, with: { policy: m } }\n  ok: { uses: grpo, needs: [split], on: h200, gpus: 1, with: { policy: m, trainer: worker } }\n`,
  );
  assert.equal(errors, [
    'e.yaml:7:53 stages.rl.gpus: gpus: 2: the trainer worker this node starts trains on one GPU (cuda:0) and would leave 1 idle; train LoRA on one GPU (gpus: 1, lora_rank: above 0 on the model), or use trainer: verl, which shards full fine-tuning over several',
    'e.yaml:8:49 stages.ft.gpus: gpus: 2: the trainer worker this node starts trains on one GPU (cuda:0) and would leave 1 idle; train LoRA on one GPU (gpus: 1, lora_rank: above 0 on the model)',
    'e.yaml:9:53 stages.ev.gpus: gpus: 2: the trainer worker this node starts serves its model on one GPU (cuda:0) and would leave 1 idle; serve it on one GPU (gpus: 1)',
  ]);
});

test('settings: the new host shape is schema-checked, the old one named with the new shape', async () => {
  const exp = 'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n';
  let r = await load('hosts:\n  g: { ssh: me@gpu, gpus: 8 }\n', exp);
  assert.equal(r.errors.length, 1);
  assert.match(
    r.errors[0],
    /^mlepipe\.config\.yaml:2:8 hosts\.g: ssh is the old shape of a host; write docker: ssh:\/\/USER@HOST\[:PORT\]/,
  );
  r = await load('hosts:\n  g: { docker: "http://gpu:2375", gpus: -1 }\n', exp);
  assert.equal(r.errors.length, 2, r.errors.join('\n'));
  assert.match(r.errors[0], /^mlepipe\.config\.yaml:2:16 hosts\.g\.docker: /);
  assert.match(r.errors[1], /^mlepipe\.config\.yaml:2:41 hosts\.g\.gpus: must be >= 0/);
  r = await load('hosts:\n  g: { docker: "ssh://me@gpu:2222", gpus: ["0", "3"], image: "x:1", env: { A: 1 } }\n', exp);
  assert.equal(r.errors, []);
});

test('ray.address names the cluster verl nodes submit to; MLEPIPE_RAY_ADDRESS overrides it; a bad one is refused at its place', async () => {
  const exp = 'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n';
  const r = await load('ray: { address: "http://head:8265" }\n', exp);
  assert.is(r.exp!.settings.ray.address, 'http://head:8265');
  assert.is((await load('', exp)).exp!.settings.ray.address, undefined);
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-ray-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), 'ray: { address: "http://head:8265" }\n');
  await writeFile(join(dir, 'e.yaml'), exp);
  const env = await loadExperiment(join(dir, 'e.yaml'), { env: { MLEPIPE_RAY_ADDRESS: 'http://other:8265' } });
  assert.is(env.settings.ray.address, 'http://other:8265');
  const bad = await load('ray: { address: "head:6379" }\n', exp);
  assert.equal(bad.errors.length, 1);
  assert.match(bad.errors[0], /^mlepipe\.config\.yaml:1:17 ray\.address: /);
});

test('logger: TensorBoard always, wandb when listed; another tracker is refused at its place', async () => {
  const exp = 'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n';
  assert.equal((await load('', exp)).exp!.settings.logger, ['tensorboard']);
  assert.equal((await load('logger: [wandb]\n', exp)).exp!.settings.logger, ['tensorboard', 'wandb']);
  assert.equal((await load('logger: [wandb, tensorboard]\n', exp)).exp!.settings.logger, ['tensorboard', 'wandb']);
  const bad = await load('logger: [mlflow]\n', exp);
  assert.equal(bad.errors.length, 1);
  assert.is(bad.errors[0], 'mlepipe.config.yaml:1:10 logger[0]: must be one of: "tensorboard", "wandb"');
});

test('retries: with on: only; defaults to 0', async () => {
  const { exp } = await load(
    HOSTS,
    'name: e\nstages:\n  a: { uses: shell, with: { run: x }, on: h200, retries: 2 }\n  b: { uses: shell, with: { run: x }, on: h200 }\n',
  );
  assert.equal(
    exp!.stages.map((s) => s.retries),
    [2, 0],
  );
  const { errors } = await load(HOSTS, 'name: e\nstages:\n  a: { uses: shell, with: { run: x }, retries: 1 }\n');
  assert.equal(errors, [
    'e.yaml:3:48 stages.a.retries: retries: tries a node again after its host fails: set on: as well',
  ]);
});

test('key and certificate paths: ~/ is the home folder, relative ones start at the settings file; shm_size takes sizes', async () => {
  const { exp, dir, errors } = await load(
    'hosts:\n  s: { docker: "ssh://me@gpu", identity: keys/id, known_hosts: "~/kh", shm_size: 16g }\n  t: { docker: "tcp://gpu:2376", tls: { ca: "~/c/ca.pem", cert: /abs/cert.pem, key: k.pem }, shm_size: 1024 }\n',
    'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n',
  );
  assert.equal(errors, []);
  const { s, t } = exp!.settings.hosts;
  assert.equal([s.identity, s.known_hosts], [join(dir, 'keys/id'), join(homedir(), 'kh')]);
  assert.equal(t.tls, { ca: join(homedir(), 'c/ca.pem'), cert: '/abs/cert.pem', key: join(dir, 'k.pem') });
  const bad = await load(
    'hosts:\n  s: { docker: "tcp://gpu:2376", shm_size: lots, tls: { ca: a } }\n',
    'name: e\nstages:\n  a: { uses: shell, with: { run: x } }\n',
  );
  assert.equal(bad.errors.length, 3, bad.errors.join('\n'));
  assert.match(bad.errors.join('\n'), /hosts\.s\.shm_size: /);
  assert.match(bad.errors.join('\n'), /hosts\.s\.tls: .*cert/);
});

test('-S hosts.NAME.KEY=VALUE sets the project settings, checked with the argument as the place', async () => {
  const exp = 'name: e\nstages:\n  a: { uses: shell, with: { run: x }, on: h200 }\n';
  let r = await load(HOSTS, exp, [
    'hosts.big.gpus=4',
    'hosts.new.docker=tcp://10.0.0.9:2375',
    'hosts.new.labels=[h200]',
  ]);
  assert.equal(r.errors, []);
  assert.is(r.exp!.settings.hosts.big.gpus, 4);
  assert.equal(r.exp!.settings.hosts.new, { docker: 'tcp://10.0.0.9:2375', labels: ['h200'] });
  r = await load(HOSTS, exp, ['hosts.big.gpus=-2']);
  assert.equal(r.errors, ['-S hosts.big.gpus=-2:1:19 hosts.big.gpus: must be >= 0']);
});

test('sandbox: cpus_per_run must fit a matching host that counts its CPUs (cpus:), among those with GPUs enough', async () => {
  const settings =
    'hosts:\n  a: { docker: "tcp://127.0.0.1:2375", gpus: 1, cpus: 16, labels: [g] }\n  b: { docker: "tcp://127.0.0.1:2376", gpus: 2, cpus: 64, labels: [g] }\n  c: { docker: "tcp://127.0.0.1:2377", labels: [g] }\n';
  const exp = (sb: string) =>
    `name: e\nstages:\n  t: { uses: generate, with: { seeds: mlebench-tabular, count: 1 } }\n  a:\n    uses: eval\n    needs: [t]\n    sandbox: ${sb}\n    with: { policy: scripted:linear }\n`;
  // b holds one run of 2 GPUs and 36 CPUs; host c does not count its CPUs, so any count fits it.
  assert.equal((await load(settings, exp('{ on: g, gpus_per_run: 2, cpus_per_run: 36 }'))).errors, []);
  assert.equal((await load(settings, exp('{ on: g, cpus_per_run: 100 }'))).errors, []);
  // Of the hosts with 2 GPUs (b alone), none has 65 CPUs; c, which counts none, lends no GPUs.
  const { errors } = await load(settings, exp('{ on: g, gpus_per_run: 2, cpus_per_run: 65 }'));
  assert.equal(errors.length, 1, errors.join('\n'));
  assert.match(errors[0], /^e\.yaml:7:54 stages\.a\.sandbox\.cpus_per_run: 65 CPUs per run, but b has 64 \(cpus: in /);
  const tooMany = await load(
    settings.replace('  c: { docker: "tcp://127.0.0.1:2377", labels: [g] }\n', ''),
    exp('{ on: g, cpus_per_run: 65 }'),
  );
  assert.match(
    tooMany.errors.join('\n'),
    /^e\.yaml:7:37 stages\.a\.sandbox\.cpus_per_run: 65 CPUs per run, but a has 16, b has 64 \(cpus: in /,
  );
  assert.match(
    (await load(settings.replace('cpus: 16', 'cpus: 0'), exp('{ on: g }'))).errors.join('\n'),
    /hosts\.a\.cpus/,
  );
});

test.run();
