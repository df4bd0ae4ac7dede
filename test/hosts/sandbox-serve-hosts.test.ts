// verl's sandbox service with its jails on hosts (`mlepipe sandbox serve
// --on LABEL`, MLEPIPE_SANDBOX_ON for launch.sh): the agent's code runs in
// containers on the hosts' engines (this machine's engine behind two proxies),
// the service and its grading stay here, and the grades are those of the same
// episodes served with local jails. A label no host carries is refused.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli, outputsOf, readJsonl, tmpProject } from '../helpers.js';
import { exportExperiment, serveExport } from '../verl/serve-export.js';
import { engineProxy } from './engines.js';

const EXP = exportExperiment('served');

type Traj = {
  task_id: string;
  turns: { action: string; code?: string }[];
  messages: unknown[];
  submission: string | null;
  ended: string;
  scaffold: string;
};
type Grade = { reward: number; variables: Record<string, number>; grade_error: string | null };

const created: Record<'a' | 'b', Array<Record<string, unknown>>> = { a: [], b: [] };
const [pa, pb] = [await engineProxy(created.a), await engineProxy(created.b)];
const settings = `hosts:\n  a: { docker: "tcp://127.0.0.1:${pa.port}", labels: [cpu] }\n  b: { docker: "tcp://127.0.0.1:${pb.port}", labels: [cpu] }\n`;
const dir = await tmpProject({ 'e.yaml': EXP }, settings);
const made = await cli(['run', 'e.yaml'], { cwd: dir, env: { TINY_KEY: 'sk-test' } });

test.after(() => {
  pa.cut();
  pb.cut();
});

/** Each demonstration replayed through the service: all sessions opened first (so that they spread), then run and graded. */
async function replay(svc: Awaited<ReturnType<typeof serveExport>>, demos: Traj[]): Promise<Grade[]> {
  const sessions: string[] = [];
  for (const t of demos) sessions.push(((await svc.post('/open', { task: t.task_id })) as { session: string }).session);
  const grades: Grade[] = [];
  for (const [k, t] of demos.entries()) {
    for (const [i, x] of t.turns.entries())
      if (x.action === 'code')
        await svc.post('/run', { session: sessions[k], code: x.code, turn: i, timeout_ms: 60_000 });
    const episode = {
      scaffold: t.scaffold,
      messages: t.messages,
      turns: t.turns,
      submission: t.submission,
      ended: t.ended,
      step: 1,
    };
    grades.push((await svc.post('/grade', { session: sessions[k], episode })) as Grade);
  }
  return grades;
}

test('sandbox serve --on: the jails run on both hosts without network or mounts, and grade as local jails do', async () => {
  assert.is(made.exitCode, 0, made.stderr);
  const verl = `${await outputsOf(dir, 'rl')}/verl`;
  const demos = (await readJsonl(`${await outputsOf(dir, 'demos')}/trajectories.jsonl`)) as Traj[];
  assert.is(demos.length, 2);
  const far = await serveExport(verl, dir, ['--on', 'cpu']);
  let there: Grade[];
  try {
    there = await replay(far, demos);
    assert.match(far.stderr(), /sandboxes on a \(tcp:\/\/127\.0\.0\.1:\d+\), b \(tcp:\/\/127\.0\.0\.1:\d+\)/);
  } finally {
    await far.stop();
  }
  for (const h of ['a', 'b'] as const) {
    const jails = created[h].filter((c) => c.User === '65534:65534');
    assert.ok(jails.length > 0, `host ${h} ran no jail`);
    for (const c of jails) {
      const hc = c.HostConfig as { NetworkMode?: string; Binds?: unknown; Mounts?: Array<{ Type: string }> };
      assert.is(hc.NetworkMode, 'none');
      assert.is(hc.Binds, undefined);
      assert.ok(hc.Mounts?.every((m) => m.Type === 'volume'));
    }
  }
  const near = await serveExport(verl, dir);
  let here: Grade[];
  try {
    here = await replay(near, demos);
  } finally {
    await near.stop();
  }
  assert.ok(
    here.some((g) => g.variables.success === 1),
    'a demonstration that succeeds',
  );
  assert.equal(there, here);
});

test('sandbox serve --on a label no host carries, or with another backend, is refused', async () => {
  const verl = `${await outputsOf(dir, 'rl')}/verl`;
  const r = await cli(['sandbox', 'serve', '--export', verl, '--on', 'gpu'], { cwd: dir });
  assert.is(r.exitCode, 2, r.stderr);
  assert.match(r.stderr, /--on gpu: no host named or labelled "gpu" in .*mlepipe\.config\.yaml/);
  const b = await cli(['sandbox', 'serve', '--export', verl, '--on', 'cpu', '--backend', 'bwrap'], { cwd: dir });
  assert.is(b.exitCode, 2, b.stderr);
  assert.match(b.stderr, /--backend bwrap with --on cpu: jails on hosts are containers/);
  const g = await cli(['sandbox', 'serve', '--export', verl, '--on', 'cpu', '--gpus-per-run', '1'], { cwd: dir });
  assert.is(g.exitCode, 2, g.stderr);
  assert.match(g.stderr, /--gpus-per-run 1: no host matching "cpu" lends that many \(most: 0/);
});

test.run();
