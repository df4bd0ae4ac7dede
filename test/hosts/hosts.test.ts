// Nodes on hosts, with this machine's Docker engine standing in for remote
// ones: reached over TCP on loopback through a small proxy to its socket
// (test/hosts/engines.ts; it also keeps the container specs it forwards, so
// that GPU requests can be checked on a machine without GPUs).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Docker from 'dockerode';
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { memoryIO } from '../../cli/io.js';
import { planCommand } from '../../cli/commands/plan.js';
import { runCommand } from '../../cli/commands/run.js';
import { hostsBuildCommand, hostsCommand } from '../../cli/commands/hosts.js';
import { closedPort, nodeLogs, ROOT, tmpProject, waitFor } from '../helpers.js';
import { engineProxy } from './engines.js';

const IMAGE = `mlepipe-hosts-test:${process.pid}`;
const docker = new Docker();
let proxy: Awaited<ReturnType<typeof engineProxy>>;
let port = 0;
const created: Array<Record<string, unknown>> = [];

test.before(async () => {
  await execa('bash', [join(ROOT, 'test/hosts/image.sh'), IMAGE]);
  proxy = await engineProxy(created);
  port = proxy.port;
});

test.after(async () => {
  proxy.cut();
  await docker
    .getImage(IMAGE)
    .remove({ force: true })
    .catch(() => {});
});

const settings = (extra = '') =>
  `cache: .mlepipe\nhosts:\n  remote: { docker: "tcp://127.0.0.1:${port}", image: "${IMAGE}", labels: [box], gpus: 0, env: { FROM_HOST: yes } }\n${extra}`;

const CHAIN = (on: string) => `name: chain
stages:
  a: { uses: shell, with: { run: 'printf "1\\n2\\n3\\n" > $MLEPIPE_OUT/nums.txt' } }
  b:
    uses: shell
    needs: [a]
    ${on}
    with:
      deps: [scale.txt]
      outs: [res/doubled.txt]
      run: |
        mkdir -p res
        k=$(cat scale.txt)
        for n in $(cat $MLEPIPE_IN_A/nums.txt); do echo $((n * k)); done > res/doubled.txt
        echo "{\\"k\\": $k, \\"lines\\": $(wc -l < res/doubled.txt)}" > $MLEPIPE_OUT/metrics.json
        echo "on $MLEPIPE_HOST $FROM_HOST"
  c: { uses: shell, needs: [b], with: { run: 'cat $MLEPIPE_IN_B/res/doubled.txt | tr "\\n" + > $MLEPIPE_OUT/sum.txt' } }
`;

async function run(dir: string, args: Record<string, unknown> = {}, signal?: AbortSignal) {
  const io = { ...memoryIO(), signal };
  const code = await runCommand(join(dir, 'e.yaml'), args, io);
  return { code, err: io.stderr.join('\n') };
}

async function entryFiles(dir: string, node: string): Promise<Record<string, string>> {
  const io = memoryIO();
  await planCommand(join(dir, 'e.yaml'), { json: true }, io);
  const key = (JSON.parse(io.stdout.join('')) as { nodes: Array<{ id: string; key: string }> }).nodes.find(
    (n) => n.id === node,
  )!.key;
  const out: Record<string, string> = {};
  const root = join(dir, '.mlepipe');
  const walk = async (d: string, rel: string) => {
    for (const e of await readdir(d, { withFileTypes: true })) {
      if (e.isDirectory()) await walk(join(d, e.name), `${rel}${e.name}/`);
      else if (e.name !== 'manifest.json') out[rel + e.name] = await readFile(join(d, e.name), 'utf8');
    }
  };
  const entries = (await readdir(root, { recursive: true, withFileTypes: true })).filter(
    (e) => e.isDirectory() && e.name === key,
  );
  assert.is(entries.length, 1, `one entry for ${node}`);
  await walk(join(entries[0].parentPath, entries[0].name), '');
  return out;
}

async function leftContainers(): Promise<number> {
  return (await docker.listContainers({ all: true, filters: { label: ['mlepipe.node'], ancestor: [IMAGE] } })).length;
}

test('a chain with one node on a host and two here: outputs as a local run, cached on rerun, placement not in the key', async () => {
  const here = await tmpProject({ 'e.yaml': CHAIN(''), 'scale.txt': '2\n' });
  const there = await tmpProject({ 'e.yaml': CHAIN('on: remote'), 'scale.txt': '2\n' }, settings());
  assert.is((await run(here)).code, 0);
  const first = await run(there);
  assert.is(first.code, 0, first.err);
  const plan = memoryIO();
  await planCommand(join(there, 'e.yaml'), {}, plan);
  assert.match(plan.stdout.join('\n'), /cached +b +\w+ +on remote/);
  const keys = async (dir: string) => {
    const io = memoryIO();
    await planCommand(join(dir, 'e.yaml'), { json: true }, io);
    return (JSON.parse(io.stdout.join('')) as { nodes: Array<{ id: string; key: string }> }).nodes.map((n) => [
      n.id,
      n.key,
    ]);
  };
  assert.equal(await keys(there), await keys(here));
  assert.match(await nodeLogs(there), 'on remote yes');
  for (const node of ['a', 'b', 'c']) assert.equal(await entryFiles(there, node), await entryFiles(here, node), node);
  assert.equal(await entryFiles(there, 'c'), { 'sum.txt': '2+4+6+' });
  const again = await run(there);
  assert.is(again.code, 0);
  assert.match(again.err, /3 cached, 0 to run/);
  assert.is(await leftContainers(), 0);
});

test('GPUs: the container asks for the ids the host lends; two nodes wanting more than it has run one after the other', async () => {
  const dir = await tmpProject(
    {
      'e.yaml': `name: gpus
stages:
  x: { uses: shell, on: h200, gpus: 2, with: { run: 'echo x > $MLEPIPE_OUT/x' } }
  y: { uses: shell, on: h200, gpus: 1, with: { run: 'echo y > $MLEPIPE_OUT/y' } }
`,
    },
    settings(`  gpu: { docker: "tcp://127.0.0.1:${port}", image: "${IMAGE}", labels: [h200], gpus: ["2", "5"] }\n`),
  );
  created.length = 0;
  const r = await run(dir, { keepGoing: true, jobs: 2 });
  // No GPU on this machine: the engine refuses to start them, naming no device; the error names the host.
  assert.is(r.code, 1);
  assert.match(r.err, /x +failed: host gpu: could not start the node's container/);
  const asked = created.map((c) => (c.HostConfig as { DeviceRequests?: unknown[] }).DeviceRequests);
  assert.equal(asked, [
    [{ Driver: '', Count: 0, DeviceIDs: ['2', '5'], Capabilities: [['gpu']], Options: {} }],
    [{ Driver: '', Count: 0, DeviceIDs: ['2'], Capabilities: [['gpu']], Options: {} }],
  ]);
  // y needed a GPU that x held: it started only once x had given them back.
  const order = r.err
    .split('\n')
    .filter((l) => /[▶✖] +[xy] /.test(l))
    .map((l) => l.trim().slice(0, 3));
  assert.equal(order, ['▶ x', '✖ x', '▶ y', '✖ y']);
  assert.is(await leftContainers(), 0);
});

test('faults name the host and leave nothing in the cache: unreachable, image missing, container killed', async () => {
  const dead = await closedPort();
  const dir = await tmpProject(
    {
      'e.yaml': `name: faults
stages:
  gone: { uses: shell, on: nowhere, with: { run: 'echo > $MLEPIPE_OUT/x' } }
  noimage: { uses: shell, on: bare, with: { run: 'echo > $MLEPIPE_OUT/x' } }
  killed: { uses: shell, on: remote, with: { run: 'echo started; sleep 600; echo > $MLEPIPE_OUT/x' } }
`,
    },
    settings(
      `  nowhere: { docker: "tcp://127.0.0.1:${dead}", gpus: 0 }\n  bare: { docker: "tcp://127.0.0.1:${port}", image: "mlepipe-no-such-image:${process.pid}", gpus: 0 }\n`,
    ),
  );
  const running = run(dir, { keepGoing: true, jobs: 3 });
  await waitFor(
    async () =>
      (await docker.listContainers({ filters: { label: ['mlepipe.node=killed'], ancestor: [IMAGE] } })).length === 1,
    120_000,
    'the node container',
  );
  const [c] = await docker.listContainers({ filters: { label: ['mlepipe.node=killed'], ancestor: [IMAGE] } });
  await docker.getContainer(c.Id).kill();
  const r = await running;
  assert.is(r.code, 1);
  assert.match(r.err, new RegExp(`gone +failed: host nowhere \\(tcp://127.0.0.1:${dead}\\) is unreachable`));
  assert.match(r.err, /noimage +failed: host bare: image mlepipe-no-such-image:\d+ not found there/);
  assert.match(r.err, /killed +failed: host remote: the node's container was killed \(exit 137\)/);
  const plan = memoryIO();
  await planCommand(join(dir, 'e.yaml'), {}, plan);
  assert.is(plan.stdout.join('\n').match(/^ +run /gm)?.length, 3);
  assert.is(await leftContainers(), 0);
});

test('an engine lost mid-node fails the node naming the host; nothing is cached', async () => {
  const flaky = await engineProxy(created);
  const dir = await tmpProject(
    {
      'e.yaml':
        "name: lost\nstages:\n  far: { uses: shell, on: flaky, with: { run: 'echo started; sleep 600; echo > $MLEPIPE_OUT/x' } }\n",
    },
    settings(`  flaky: { docker: "tcp://127.0.0.1:${flaky.port}", image: "${IMAGE}" }\n`),
  );
  const running = run(dir);
  await waitFor(
    async () =>
      (await docker.listContainers({ filters: { label: ['mlepipe.node=far'], ancestor: [IMAGE] } })).length === 1,
    120_000,
    'the node container',
  );
  flaky.cut();
  const r = await running;
  assert.is(r.code, 1);
  assert.match(r.err, /far +failed: host flaky: lost the node's container/);
  const plan = memoryIO();
  await planCommand(join(dir, 'e.yaml'), {}, plan);
  assert.match(plan.stdout.join('\n'), /run +far /);
  // The engine itself never went away here: what the lost connection left running is removed by hand.
  for (const c of await docker.listContainers({
    all: true,
    filters: { label: ['mlepipe.node=far'], ancestor: [IMAGE] },
  }))
    await docker.getContainer(c.Id).remove({ force: true });
});

test('Ctrl-C stops a node on a host: its container goes, nothing is cached, a rerun runs it', async () => {
  const dir = await tmpProject(
    {
      'e.yaml':
        "name: stop\nstages:\n  long: { uses: shell, on: box, with: { run: 'sleep 600; echo > $MLEPIPE_OUT/x' } }\n",
    },
    settings(),
  );
  const ctl = new AbortController();
  const running = run(dir, {}, ctl.signal);
  await waitFor(
    async () =>
      (await docker.listContainers({ filters: { label: ['mlepipe.node=long'], ancestor: [IMAGE] } })).length === 1,
    120_000,
    'the node container',
  );
  ctl.abort();
  const r = await running;
  // Interrupted: 130, as for Ctrl-C anywhere.
  assert.is(r.code, 130, r.err);
  assert.match(r.err, /long +skipped: interrupted/);
  assert.is(await leftContainers(), 0);
  const plan = memoryIO();
  await planCommand(join(dir, 'e.yaml'), {}, plan);
  assert.match(plan.stdout.join('\n'), /run +long .* on box \(remote\)/);
});

test('retries: a node whose host is unreachable runs on another host of its label, the log says so; a failing command is not retried', async () => {
  const dead = await closedPort();
  const dir = await tmpProject(
    {
      'e.yaml': `name: retry
stages:
  moved: { uses: shell, on: pool, retries: 1, with: { run: 'echo "ran on $MLEPIPE_HOST" > $MLEPIPE_OUT/where.txt' } }
  broken: { uses: shell, on: pool, retries: 2, with: { run: 'exit 3' } }
  once: { uses: shell, on: deadonly, with: { run: 'echo > $MLEPIPE_OUT/x' } }
`,
    },
    settings(
      `  dead: { docker: "tcp://127.0.0.1:${dead}", image: "${IMAGE}", labels: [pool, deadonly] }\n  live: { docker: "tcp://127.0.0.1:${port}", image: "${IMAGE}", labels: [pool] }\n`,
    ),
  );
  const r = await run(dir, { keepGoing: true, jobs: 1 });
  assert.is(r.code, 1, r.err);
  // Each pool node first lands on dead (the first host of the label); moved and broken move to live.
  assert.match(r.err, /… +moved +host dead failed; trying again \(1 of 1 retries\) on another matching host/);
  assert.match(r.err, /✔ +moved/);
  assert.equal(await entryFiles(dir, 'moved'), { 'where.txt': 'ran on live\n' });
  assert.match(
    await nodeLogs(dir),
    new RegExp(`mlepipe: try 2 of 2: host dead failed \\(host dead \\(tcp://127.0.0.1:${dead}\\) is unreachable`),
  );
  // broken reached live after its host fault; its command failing there is its own, not retried.
  assert.is(r.err.match(/… +broken +host dead failed; trying again/g)?.length, 1);
  assert.match(r.err, /broken +failed: command exited with code 3 on host live/);
  // No retries asked: the host fault ends the node.
  assert.match(r.err, new RegExp(`once +failed: host dead \\(tcp://127.0.0.1:${dead}\\) is unreachable`));
  assert.is(await leftContainers(), 0);
});

test('retries: a host that dies mid-node hands the node to another host of its label', async () => {
  const flaky = await engineProxy();
  const dir = await tmpProject(
    {
      'e.yaml': `name: dies\nstages:\n  far: { uses: shell, on: pair, retries: 1, with: { run: 'if [ "$MLEPIPE_HOST" = flaky ]; then echo started; sleep 600; fi; echo "on $MLEPIPE_HOST" > $MLEPIPE_OUT/x' } }\n`,
    },
    settings(
      `  flaky: { docker: "tcp://127.0.0.1:${flaky.port}", image: "${IMAGE}", labels: [pair] }\n  steady: { docker: "tcp://127.0.0.1:${port}", image: "${IMAGE}", labels: [pair] }\n`,
    ),
  );
  try {
    const running = run(dir);
    await waitFor(
      async () =>
        (await docker.listContainers({ filters: { label: ['mlepipe.node=far'], ancestor: [IMAGE] } })).length === 1,
      120_000,
      'the node container',
    );
    flaky.cut();
    const r = await running;
    assert.is(r.code, 0, r.err);
    assert.match(r.err, /… +far +host flaky failed; trying again \(1 of 1 retries\)/);
    assert.equal(await entryFiles(dir, 'far'), { x: 'on steady\n' });
    assert.match(await nodeLogs(dir), /mlepipe: try 2 of 2: host flaky failed \(host flaky: lost the node's container/);
  } finally {
    // The engine itself never went away: what the cut left running on "flaky" is removed by hand.
    for (const c of await docker.listContainers({
      all: true,
      filters: { label: ['mlepipe.node=far'], ancestor: [IMAGE] },
    }))
      await docker.getContainer(c.Id).remove({ force: true });
  }
});

test('cache_dir: input and output folders are mounts of the cache the host shares, not archives; shm_size reaches the container; a cache_dir that is not the cache is refused', async () => {
  const made: Array<Record<string, unknown>> = [];
  const requests: string[] = [];
  const mounting = await engineProxy(made, requests);
  const host = (cacheDir: string) =>
    settings(
      `  mounted: { docker: "tcp://127.0.0.1:${mounting.port}", image: "${IMAGE}", shm_size: 64m, cache_dir: "${cacheDir}" }\n`,
    );
  try {
    const here = await tmpProject({ 'e.yaml': CHAIN(''), 'scale.txt': '3\n' });
    const dir = await tmpProject({ 'e.yaml': CHAIN('on: mounted'), 'scale.txt': '3\n' });
    const cache = join(dir, '.mlepipe');
    await writeFile(join(dir, 'mlepipe.config.yaml'), host(cache));
    assert.is((await run(here)).code, 0);
    const r = await run(dir);
    assert.is(r.code, 0, r.err);
    for (const node of ['a', 'b', 'c']) assert.equal(await entryFiles(dir, node), await entryFiles(here, node), node);
    const hc = made[0].HostConfig as { Binds: string[]; ShmSize: number };
    assert.is(hc.ShmSize, 64 * 1024 * 1024);
    assert.is(hc.Binds.length, 2);
    assert.match(hc.Binds[0], new RegExp(`^${cache}/nodes/[0-9a-f]+:/mlepipe/in/0:ro$`));
    assert.match(hc.Binds[1], new RegExp(`^${cache}/tmp/[^/]+:/mlepipe/out$`));
    // Read back from the container: the marker that proves the mount, and the declared output (it lives in the experiment folder there).
    const fetched = requests
      .filter((l) => l.startsWith('GET') && l.includes('/archive?'))
      .map((l) => decodeURIComponent(/path=([^& ]+)/.exec(l)![1]));
    assert.equal(fetched, ['/mlepipe/out/.mlepipe-shared', '/mlepipe/exp/res/doubled.txt']);

    const elsewhere = await tmpProject({ 'e.yaml': CHAIN('on: mounted'), 'scale.txt': '3\n' });
    await writeFile(
      join(elsewhere, 'mlepipe.config.yaml'),
      host(await mkdtemp(join(tmpdir(), 'mlepipe-not-the-cache-'))),
    );
    const wrong = await run(elsewhere);
    assert.is(wrong.code, 1);
    assert.match(wrong.err, /b +failed: host mounted: cache_dir \/\S+ there does not hold this machine's cache/);
    const plan = memoryIO();
    await planCommand(join(elsewhere, 'e.yaml'), {}, plan);
    assert.match(plan.stdout.join('\n'), /run +b /);
    assert.is(await leftContainers(), 0);
  } finally {
    mounting.cut();
  }
});

test('mlepipe hosts: reachability, Docker version, GPUs (nvidia-smi there) and image for each host; -S sets a host', async () => {
  const dead = await closedPort();
  const dir = await tmpProject(
    {},
    settings(`  nowhere: { docker: "tcp://127.0.0.1:${dead}", gpus: ["0", "1"], labels: [h200] }\n`),
  );
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    let io = memoryIO();
    assert.is(await hostsCommand({}, io), 3);
    const version = (await docker.version()).Version;
    assert.equal(io.stdout, [
      `remote   tcp://127.0.0.1:${port}  0 GPUs  [box]  ✔ Docker ${version}, image ${IMAGE} present`,
      `nowhere  tcp://127.0.0.1:${dead}  GPUs 0, 1  [h200]  ✖ unreachable: connect ECONNREFUSED 127.0.0.1:${dead}`,
    ]);
    // The same engine said to lend 2 GPUs: nvidia-smi is run there with a GPU request, which this machine cannot serve.
    io = memoryIO();
    assert.is(
      await hostsCommand(
        {
          set: ['hosts.remote.gpus=2', `hosts.nowhere.docker=tcp://127.0.0.1:${port}`, `hosts.nowhere.image=${IMAGE}`],
        },
        io,
      ),
      3,
    );
    assert.equal(io.stdout.length, 4, io.stdout.join('\n'));
    assert.is(
      io.stdout[0],
      `remote   tcp://127.0.0.1:${port}  2 GPUs  [box]  ✔ Docker ${version}, image ${IMAGE} present`,
    );
    assert.match(io.stdout[1], /^ {7}  ✖ no GPUs: the engine has no NVIDIA runtime for GPU requests \(.*\)$/);
    assert.match(io.stdout[3], /^ {7}  ✖ no GPUs: the engine has no NVIDIA runtime/);
    assert.is((await docker.listContainers({ all: true, filters: { label: ['mlepipe.probe'] } })).length, 0);
  } finally {
    process.chdir(cwd);
  }
});

test("mlepipe hosts build: a Dockerfile built on the host's engine, then nodes run in its image; a failing build names the host", async () => {
  const tag = `mlepipe-hosts-built:${process.pid}`;
  // FROM the test's own image: local, with bash (the sandbox image has no shell).
  const ctx = await tmpProject({
    Dockerfile: `FROM ${IMAGE}\nCOPY hello.txt /hello.txt\n`,
    'hello.txt': 'built here\n',
    'bad/Dockerfile': `FROM ${IMAGE}\nCOPY missing.txt /\n`,
  });
  const dir = await tmpProject(
    {
      'e.yaml':
        "name: built\nstages:\n  read: { uses: shell, on: remote, with: { run: 'cat /hello.txt > $MLEPIPE_OUT/h' } }\n",
    },
    settings().replace(`image: "${IMAGE}"`, `image: "${tag}"`),
  );
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    let io = memoryIO();
    assert.is(await hostsBuildCommand('remote', { file: join(ctx, 'Dockerfile') }, io), 0, io.stderr.join('\n'));
    assert.match(io.stderr.join('\n'), `✔ built ${tag} on host remote`);
    await docker.getImage(tag).inspect();
    const r = await run(dir);
    assert.is(r.code, 0, r.err);
    assert.equal(await entryFiles(dir, 'read'), { h: 'built here\n' });
    io = memoryIO();
    assert.is(await hostsBuildCommand('remote', { file: join(ctx, 'bad/Dockerfile'), tag: `${tag}-bad` }, io), 1);
    assert.match(io.stderr.join('\n'), /✖ host remote: the build failed: .*missing\.txt/);
    try {
      await hostsBuildCommand('elsewhere', {}, memoryIO());
      assert.unreachable();
    } catch (err) {
      assert.match((err as Error).message, 'no host named "elsewhere"');
    }
  } finally {
    process.chdir(cwd);
    await docker
      .getImage(tag)
      .remove({ force: true })
      .catch(() => {});
  }
});

test.run();
