// Episodes' jails on hosts (`sandbox: { on: LABEL }`), with this machine's
// Docker engine standing in for two remote ones (test/hosts/engines.ts: TCP
// proxies that keep the container specs they forward). An eval whose
// sandboxes run there gives the results of the same eval run here; its
// containers are spread over both hosts, with no network and no folder of
// this machine mounted (public/ and the workspace travel as archives,
// private/ never leaves, the grader runs here). A host that cannot be
// reached hands its sessions to the other; one lost mid-evaluation loses only
// the runs it held, which start again on the other. A label no host carries
// loads with a warning and is refused by run; sandbox: on a stage that runs no
// episodes is refused at its position.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  cli,
  closedPort,
  nodeKey,
  nodeLog,
  outputsOf,
  readJsonl,
  sharedCacheSettings,
  tmpProject,
  ownTaskNodes,
  shareTaskNodes,
} from '../helpers.js';
import { engineProxy } from './engines.js';

// The generated tasks come from another test file that built the same key, when one did (test/shared-tasks.ts).
shareTaskNodes();

const created: Record<string, Array<Record<string, unknown>>> = { a: [], b: [] };
// The results of the plain eval run here (the first test's), for later tests to compare with.
let localOutcome: ReturnType<typeof outcome> | undefined;
let proxies: Array<Awaited<ReturnType<typeof engineProxy>>> = [];

test.before(async () => {
  proxies = [await engineProxy(created.a), await engineProxy(created.b)];
});

test.after(() => {
  for (const p of proxies) p.cut();
});

// One cache for the file: every test's tasks are the same nodes, generated and filtered once. Its evals are
// forced (run from scratch, every episode again); what a test reads of one is read before the next eval with
// the same key replaces it.
const { cache, settings: CACHE } = await sharedCacheSettings();
const run = (dir: string, ...more: string[]) => cli(['run', 'e.yaml', '--force=agents', ...more], { cwd: dir });
const nodeLogs = async (dir: string) => nodeLog(cache, await nodeKey(dir, 'agents'));

const ownCacheHosts = (a: string, b: string) =>
  `sandbox: { backend: docker }\nhosts:\n  a: { docker: "${a}", labels: [cpu] }\n  b: { docker: "${b}", labels: [cpu] }\n`;
const hosts = (a: string, b: string) => CACHE + ownCacheHosts(a, b);
const EXP = (placement: string, policies = 'scripted:linear, scripted:forest') => `name: spread
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: 3, samples: [50, 80], seed: 1 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  agents:
    uses: eval
    needs: [verified]
    ${placement}
    with: { policies: [${policies}], max_turns: 4, step_timeout: 120 }
`;

type Result = { task_id: string; policy: string; valid_submission: boolean; score: number | null; any_medal: boolean };
const outcome = (rows: Result[]) =>
  rows
    .map((r) => [r.task_id, r.policy, r.valid_submission, r.score, r.any_medal])
    .sort((x, y) => `${x[0]}${x[1]}`.localeCompare(`${y[0]}${y[1]}`));

async function results(dir: string): Promise<Result[]> {
  return (await readJsonl(`${await outputsOf(dir, 'agents')}/results.jsonl`)) as Result[];
}

test('an eval with its sandboxes on two hosts gives the results of the same eval here; each host ran containers without network or mounts', async () => {
  const [a, b] = proxies.map((p) => `tcp://127.0.0.1:${p.port}`);
  const there = await tmpProject({ 'e.yaml': EXP('sandbox: { on: cpu }') }, hosts(a, b));
  const r = await run(there);
  assert.is(r.exitCode, 0, r.stderr);
  // Read before the eval here, which has the same key (placement is not in it) and replaces the entry.
  const far = await results(there);
  const logs = await nodeLogs(there);
  const here = await tmpProject({ 'e.yaml': EXP('') }, hosts(a, b));
  const l = await run(here);
  assert.is(l.exitCode, 0, l.stderr);
  const near = await results(here);
  assert.is(far.length, 6);
  localOutcome = outcome(near);
  assert.equal(outcome(far), localOutcome);
  for (const h of ['a', 'b'] as const) {
    assert.ok(created[h].length > 0, `host ${h} ran no container`);
    for (const c of created[h]) {
      const hc = c.HostConfig as {
        NetworkMode?: string;
        Binds?: unknown;
        Mounts?: Array<{ Type: string; Source?: string; Target: string; ReadOnly?: boolean }>;
      };
      assert.is(hc.NetworkMode, 'none');
      assert.is(hc.Binds, undefined, 'no folder of this machine is mounted on a host');
      assert.ok(hc.Mounts?.every((m) => m.Type === 'volume'));
    }
    // The jails are warm executors (a server reading requests on stdin), each mounting the host's task store read-only.
    const jails = created[h].filter((c) => c.User === '65534:65534');
    assert.ok(jails.length > 0 && jails.every((c) => c.OpenStdin === true), `host ${h}: cold jails`);
    for (const c of jails)
      assert.ok(
        (c.HostConfig as { Mounts: Array<{ Source?: string; ReadOnly?: boolean }> }).Mounts.some(
          (m) => m.Source === 'mlepipe-tasks' && m.ReadOnly,
        ),
      );
    // Fewer jails than runs: a jail serves one run after another, each step a fork, not a container.
    assert.ok(jails.length < 6, `host ${h}: ${jails.length} jails`);
    // Task data went to each host at most once per task (three tasks), by the store's helper.
    const fills = created[h].filter((c) => c.User === '0:0');
    assert.ok(fills.length <= 3, `host ${h}: ${fills.length} store fills`);
  }
  assert.match(logs, /sandboxes on a \(tcp:\/\/127\.0\.0\.1:\d+\), b \(tcp:\/\/127\.0\.0\.1:\d+\)/);
  // Every run is one session: the six of them split between the two hosts.
  const [, na, nb] = /sessions per host: a (\d+), b (\d+)/.exec(logs) ?? [];
  assert.ok(Number(na) > 0 && Number(nb) > 0 && Number(na) + Number(nb) === 6, logs.slice(-2000));
});

test('a host whose engine does not answer hands its sessions to the other; with none left the node fails naming both', async () => {
  const before = created.b.length;
  const gone = `tcp://127.0.0.1:${await closedPort()}`;
  const dir = await tmpProject(
    { 'e.yaml': EXP('sandbox: { on: cpu }', 'scripted:linear') },
    hosts(gone, `tcp://127.0.0.1:${proxies[1].port}`),
  );
  const r = await run(dir);
  assert.is(r.exitCode, 0, r.stderr);
  assert.is((await results(dir)).length, 3);
  assert.ok(created.b.length > before);
  assert.match(await nodeLogs(dir), /host a could not open a sandbox \(no Docker engine at a \(tcp:/);
  const none = await tmpProject({ 'e.yaml': EXP('sandbox: { on: cpu }', 'scripted:linear') }, hosts(gone, gone));
  const f = await run(none);
  assert.is(f.exitCode, 1, f.stderr);
  assert.match(f.stderr, /no sandbox host could open a session: a: no Docker engine at a .*; b: no Docker engine at b/);
});

test('a host lost mid-evaluation loses only the runs it held: they start again on the other host, and the results are those of the eval here', async () => {
  // Host b is cut (its listener closed, every connection dropped) as the first step of a session there
  // ends: the moment its workspace is fetched back. That session is then in flight, and none has finished on b.
  let cutAt: string | undefined;
  const dying = await engineProxy([], [], (line) => {
    if (cutAt || !/^GET \S*\/archive\?path=%2Fworkspace/.test(line)) return;
    cutAt = line;
    dying.cut();
  });
  const dir = await tmpProject(
    { 'e.yaml': EXP('sandbox: { on: cpu }') },
    hosts(`tcp://127.0.0.1:${proxies[0].port}`, `tcp://127.0.0.1:${dying.port}`),
  );
  const r = await run(dir);
  assert.is(r.exitCode, 0, r.stderr);
  assert.ok(cutAt, 'no session fetched its workspace from host b');
  const logs = await nodeLogs(dir);
  assert.match(logs, /warning: host b was lost under a run \(b \(tcp:[^)]*\): could not bring the workspace back/);
  const [, na, nb, nl] = /sessions per host: a (\d+), b (\d+) \((\d+) lost with the host\)/.exec(logs) ?? [];
  assert.ok(nl, logs.slice(-2000));
  // Every session b opened was in flight when it went, and each of those runs started again on a: nothing finished was run twice.
  assert.is(Number(nl), Number(nb));
  assert.is(Number(na), 6 + Number(nl) - Number(nb));
  assert.is(logs.match(/was lost under it; the run starts again on another host/g)?.length, Number(nl));
  const got = await results(dir);
  assert.is(got.length, 6);
  if (!localOutcome) {
    const here = await tmpProject({ 'e.yaml': EXP('') }, hosts('tcp://127.0.0.1:1', 'tcp://127.0.0.1:1'));
    assert.is((await run(here)).exitCode, 0);
    localOutcome = outcome(await results(here));
  }
  assert.equal(outcome(got), localOutcome);
});

test('gpus_per_run and cpus_per_run reach the engine per jail: each jail its own device ids, as many at once as the host has GPUs for', async () => {
  const seen: Array<Record<string, unknown>> = [];
  const p = await engineProxy(seen);
  try {
    const settings = `${CACHE}sandbox: { backend: docker }\nhosts:\n  g: { docker: "tcp://127.0.0.1:${p.port}", labels: [gpu], gpus: ["0", "1", "2"] }\n`;
    const dir = await tmpProject(
      { 'e.yaml': EXP('sandbox: { on: gpu, gpus_per_run: 1, cpus_per_run: 2 }', 'scripted:linear') },
      settings,
    );
    const r = await run(dir);
    // This machine has no GPU driver: the engine refuses to start the containers, and the node says so.
    assert.is(r.exitCode, 1, r.stderr);
    assert.match(r.stderr, /could not select device driver "" with capabilities: \[\[gpu\]\]/);
    const jails = seen.filter((c) => c.User === '65534:65534');
    assert.ok(jails.length > 0);
    const asked = jails.map(
      (c) =>
        (c.HostConfig as { DeviceRequests?: Array<{ DeviceIDs: string[] | null; Capabilities: string[][] }> })
          .DeviceRequests,
    );
    for (const d of asked) {
      assert.is(d?.length, 1);
      assert.equal(d![0].Capabilities, [['gpu']]);
      assert.is(d![0].DeviceIDs?.length, 1);
      assert.ok(['0', '1'].includes(d![0].DeviceIDs![0]));
    }
    // Warm jails get one CPU more than their steps (for the server) where the host has it (this one has 2); cold steps exactly theirs.
    for (const c of jails)
      assert.ok([2e9, 3e9].includes((c.HostConfig as { NanoCpus: number }).NanoCpus), JSON.stringify(c.HostConfig));
    // The node took its sandboxes' GPUs from the hosts' pool when it started: as many runs as its
    // concurrency (2) holds open, not the host's three, which stay free for other nodes.
    assert.match(await nodeLogs(dir), /sandboxes on g \(tcp:\/\/127\.0\.0\.1:\d+, 2 runs of 1 GPUs and 2 CPUs\)/);
  } finally {
    p.cut();
  }
});

test('a host that counts its CPUs (cpus:) holds as many runs at once as they allow: one jail of 2 CPUs on 3, none on a host of 1', async () => {
  const specs: Array<Record<string, unknown>> = [];
  const lines: string[] = [];
  const small: Array<Record<string, unknown>> = [];
  const [p, q] = [await engineProxy(specs, lines), await engineProxy(small)];
  try {
    const settings = `${CACHE}sandbox: { backend: docker }\nhosts:\n  a: { docker: "tcp://127.0.0.1:${p.port}", labels: [cpu], cpus: 3 }\n  b: { docker: "tcp://127.0.0.1:${q.port}", labels: [cpu], cpus: 1 }\n`;
    const dir = await tmpProject({ 'e.yaml': EXP('sandbox: { on: cpu, cpus_per_run: 2 }') }, settings);
    const r = await run(dir, '-j', '2');
    assert.is(r.exitCode, 0, r.stderr);
    const logs = await nodeLogs(dir);
    assert.match(logs, /host b has fewer than 2 CPUs: it runs none of these sandboxes/);
    assert.match(logs, /sandboxes on a \(tcp:\/\/127\.0\.0\.1:\d+, 1 runs of 2 CPUs\)/);
    assert.match(logs, /sessions per host: a 6\b/);
    assert.is(small.length, 0);
    // Runs took turns in one jail (of eval concurrency 2): workspaces went to a single container (the
    // containers that only read the task store back take no archive in).
    const jails = new Set(
      lines.map((l) => /^PUT \S*\/containers\/([0-9a-f]{12,})\/archive/.exec(l)?.[1]).filter(Boolean),
    );
    assert.is(jails.size, 1, [...jails].join(' '));
    if (localOutcome) assert.equal(outcome(await results(dir)), localOutcome);
    else assert.is((await results(dir)).length, 6);
  } finally {
    p.cut();
    q.cut();
  }
});

test('a label no host carries loads with a warning and is refused by run before anything runs; sandbox: on a stage that runs no episodes is refused at its position', async () => {
  // A cache of its own, which no other test or file fills: nothing may have generated its tasks before.
  const settings = ownCacheHosts('tcp://127.0.0.1:1', 'tcp://127.0.0.1:2');
  const dir = await tmpProject({ 'e.yaml': EXP('sandbox: { on: gpu }') }, settings);
  ownTaskNodes(dir);
  const v = await cli(['validate', 'e.yaml'], { cwd: dir });
  assert.is(v.exitCode, 0, v.stderr);
  assert.match(
    v.stderr,
    /^warning: e\.yaml:8:\d+: stages\.agents\.sandbox\.on: no host named or labelled "gpu" in .*mlepipe run refuses this node; -S stages\.agents\.sandbox=null runs its sandboxes here/m,
  );
  // The preflight names it first; past it, the label is still refused before anything runs.
  const pre = await cli(['run', 'e.yaml'], { cwd: dir });
  assert.is(pre.exitCode, 3, pre.stderr);
  assert.match(
    pre.stderr,
    /missing: host named or labelled "gpu" for this node's sandboxes \(stages\.agents\.sandbox\.on, e\.yaml:8:/,
  );
  const r = await cli(['run', 'e.yaml', '--no-preflight'], { cwd: dir });
  assert.is(r.exitCode, 2, r.stderr);
  assert.match(
    r.stderr,
    /e\.yaml:8:\d+: stages\.agents\.sandbox\.on: no host named or labelled "gpu" to run this node's sandboxes on \(1 node\(s\) to run\)/,
  );
  // Refused before anything started: the tasks the eval needs were not generated either.
  assert.not.match(r.stderr + r.stdout, /tasks/);
  const p = await cli(['plan', 'e.yaml'], { cwd: dir });
  assert.match(p.stdout, /run +tasks +no entry/);
  // null runs them here, as if sandbox: were left out: no warning.
  const here = await cli(['validate', 'e.yaml', '-S', 'stages.agents.sandbox=null'], { cwd: dir });
  assert.is(here.exitCode, 0, here.stderr);
  assert.not.match(here.stderr, /warning/);
  const sh = await tmpProject(
    { 'e.yaml': `${EXP('')}  sh: { uses: shell, sandbox: { on: cpu }, with: { run: "true" } }\n` },
    settings,
  );
  const s = await cli(['validate', 'e.yaml'], { cwd: sh });
  assert.is(s.exitCode, 2, s.stderr);
  assert.match(
    s.stderr,
    /e\.yaml:10:\d+: stages\.sh\.sandbox\.on: sandbox: \{ on: \} runs the episodes of eval and grpo nodes on a host; shell nodes run their code here/,
  );
  // More GPUs per run than any matching host lends: such a run could never start.
  const big = await tmpProject(
    { 'e.yaml': EXP('sandbox: { on: cpu, gpus_per_run: 4 }') },
    hosts('tcp://127.0.0.1:1', 'tcp://127.0.0.1:2').replace('labels: [cpu] }\n  b', 'labels: [cpu], gpus: 2 }\n  b'),
  );
  const b = await cli(['validate', 'e.yaml'], { cwd: big });
  assert.is(b.exitCode, 2, b.stderr);
  assert.match(
    b.stderr,
    /e\.yaml:8:\d+: stages\.agents\.sandbox\.gpus_per_run: 4 GPUs per run, but no host matching "cpu" lends that many \(most: 2/,
  );
});

test.run();
