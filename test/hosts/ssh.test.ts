// Hosts over SSH and over TLS, with this machine's engine behind an sshd and
// a TLS proxy of the test's own (test/hosts/engines.ts): a chain across a
// TCP host, an SSH host and this machine gives what a local run gives; a cut
// SSH line, an unknown host key and a wrong CA are clear errors.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import Docker from 'dockerode';
import { execa } from 'execa';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { memoryIO } from '../../cli/io.js';
import { planCommand } from '../../cli/commands/plan.js';
import { runCommand } from '../../cli/commands/run.js';
import { hostsCommand } from '../../cli/commands/hosts.js';
import { closedPort, nodeLogs, ROOT, tmpProject, waitFor } from '../helpers.js';
import { engineProxy, makeCerts, startSshd, tlsEngineProxy } from './engines.js';

const IMAGE = `mlepipe-hosts-ssh-test:${process.pid}`;
const docker = new Docker();
let tcp: Awaited<ReturnType<typeof engineProxy>>;
let sshd: Awaited<ReturnType<typeof startSshd>>;
let certs: Awaited<ReturnType<typeof makeCerts>>;
let tls: Awaited<ReturnType<typeof tlsEngineProxy>>;

test.before(async () => {
  await execa('bash', [join(ROOT, 'test/hosts/image.sh'), IMAGE]);
  tcp = await engineProxy();
  sshd = await startSshd(await closedPort());
  certs = await makeCerts(await mkdtemp(join(tmpdir(), 'mlepipe-certs-')));
  tls = await tlsEngineProxy(certs);
});

test.after(async () => {
  tcp.cut();
  tls.cut();
  await sshd.dispose();
  await rm(dirname(certs.ca), { recursive: true, force: true });
  for (const c of await docker.listContainers({ all: true, filters: { ancestor: [IMAGE] } }))
    await docker.getContainer(c.Id).remove({ force: true });
  await docker
    .getImage(IMAGE)
    .remove({ force: true })
    .catch(() => {});
});

const settings = (extra = '') =>
  `cache: .mlepipe
hosts:
  tcpbox: { docker: "tcp://127.0.0.1:${tcp.port}", image: "${IMAGE}" }
  sshbox: { docker: "${sshd.address}", identity: "${sshd.identity}", known_hosts: "${sshd.knownHosts}", image: "${IMAGE}" }
${extra}`;

// a here, b on the TCP host, c on the SSH host, d here.
const CHAIN = (onB: string, onC: string) => `name: chain
stages:
  a: { uses: shell, with: { run: 'printf "1\\n2\\n3\\n" > $MLEPIPE_OUT/nums.txt' } }
  b:
    uses: shell
    needs: [a]
    ${onB}
    with:
      deps: [scale.txt]
      run: 'k=$(cat scale.txt); for n in $(cat $MLEPIPE_IN_A/nums.txt); do echo $((n * k)); done > $MLEPIPE_OUT/scaled.txt'
  c:
    uses: shell
    needs: [b]
    ${onC}
    with:
      outs: [res/sum.txt]
      run: 'mkdir -p res; s=0; for n in $(cat $MLEPIPE_IN_B/scaled.txt); do s=$((s + n)); done; echo $s > res/sum.txt; echo "c ran on $MLEPIPE_HOST"'
  d: { uses: shell, needs: [c], with: { run: 'cp $MLEPIPE_IN_C/res/sum.txt $MLEPIPE_OUT/total.txt' } }
`;

async function run(dir: string, args: Record<string, unknown> = {}) {
  const io = memoryIO();
  const code = await runCommand(join(dir, 'e.yaml'), args, io);
  return { code, err: io.stderr.join('\n') };
}

async function planText(dir: string): Promise<string> {
  const io = memoryIO();
  await planCommand(join(dir, 'e.yaml'), {}, io);
  return io.stdout.join('\n');
}

/** Every file of every cache entry (manifests aside), by node. */
async function entries(dir: string, only?: string[]): Promise<Record<string, Record<string, string>>> {
  const io = memoryIO();
  await planCommand(join(dir, 'e.yaml'), { json: true }, io);
  const out: Record<string, Record<string, string>> = {};
  const all = await readdir(join(dir, '.mlepipe'), { recursive: true, withFileTypes: true });
  for (const n of (JSON.parse(io.stdout.join('')) as { nodes: Array<{ id: string; key: string }> }).nodes) {
    if (only && !only.includes(n.id)) continue;
    const found = all.filter((e) => e.isDirectory() && e.name === n.key);
    assert.is(found.length, 1, `one entry for ${n.id}`);
    const root = join(found[0].parentPath, found[0].name);
    out[n.id] = {};
    for (const f of await readdir(root, { recursive: true, withFileTypes: true }))
      if (f.isFile() && f.name !== 'manifest.json')
        out[n.id][join(f.parentPath, f.name).slice(root.length + 1)] = await readFile(
          join(f.parentPath, f.name),
          'utf8',
        );
  }
  return out;
}

const ours = async (label: string) =>
  docker.listContainers({ all: true, filters: { label: [label], ancestor: [IMAGE] } });

test('a chain across a TCP host, an SSH host and this machine: outputs as a local run, cached on rerun', async () => {
  const here = await tmpProject({ 'e.yaml': CHAIN('', ''), 'scale.txt': '5\n' });
  const there = await tmpProject({ 'e.yaml': CHAIN('on: tcpbox', 'on: sshbox'), 'scale.txt': '5\n' }, settings());
  assert.is((await run(here)).code, 0);
  const first = await run(there);
  assert.is(first.code, 0, `${first.err}\n${sshd.log()}`);
  assert.match(await nodeLogs(there), 'c ran on sshbox');
  // The node made a dozen requests to the engine over one SSH login (a new one only after a quiet second).
  const logins = sshd.log().match(/Accepted publickey/g)?.length ?? 0;
  assert.ok(logins >= 1 && logins < 5, `${logins} SSH logins`);
  assert.equal(await entries(there), await entries(here));
  assert.equal((await entries(there)).d, { 'total.txt': '30\n' });
  const again = await run(there);
  assert.is(again.code, 0);
  assert.match(again.err, /4 cached, 0 to run/);
  assert.is((await ours('mlepipe.node')).length, 0);
});

test('an SSH host whose key is not in known_hosts is refused, naming the file; a key the host does not take, naming the user', async () => {
  const dir = await tmpProject(
    {
      'e.yaml':
        "name: k\nstages:\n  x: { uses: shell, on: stranger, with: { run: 'echo > $MLEPIPE_OUT/x' } }\n  y: { uses: shell, on: nokey, with: { run: 'echo y > $MLEPIPE_OUT/y' } }\n",
    },
    settings(
      `  stranger: { docker: "${sshd.address}", identity: "${sshd.identity}", known_hosts: "${sshd.emptyKnownHosts}", image: "${IMAGE}" }\n` +
        `  nokey: { docker: "${sshd.address}", identity: "${sshd.strangerKey}", known_hosts: "${sshd.knownHosts}", image: "${IMAGE}" }\n`,
    ),
  );
  const r = await run(dir, { keepGoing: true });
  assert.is(r.code, 1, r.err);
  assert.match(
    r.err,
    new RegExp(
      `x +failed: host stranger \\(${sshd.address}\\) is unreachable: the SSH host key of 127\\.0\\.0\\.1:\\d+ is not in ${sshd.emptyKnownHosts}`,
    ),
    r.err,
  );
  assert.match(
    r.err,
    new RegExp(`y +failed: host nokey \\(${sshd.address}\\) is unreachable: SSH login as \\w+ was refused`),
    r.err,
  );
});

test('the SSH line cut mid-node fails it naming the host, caches nothing, and a rerun with sshd back completes', async () => {
  const project = (nap: number) =>
    settings(
      `  far: { docker: "${sshd.address}", identity: "${sshd.identity}", known_hosts: "${sshd.knownHosts}", image: "${IMAGE}", env: { NAP: ${nap} } }\n`,
    );
  // The host's env is not part of the node's key: the rerun below is the same node, with a short nap.
  const dir = await tmpProject(
    {
      'e.yaml':
        "name: cut\nstages:\n  long: { uses: shell, on: far, with: { run: 'echo started; sleep $NAP; echo done > $MLEPIPE_OUT/x' } }\n",
    },
    project(600),
  );
  const running = run(dir);
  try {
    await waitFor(
      async () => (await ours('mlepipe.node=long')).some((c) => c.State === 'running'),
      120_000,
      'the node container',
    );
    await sshd.stop();
    const r = await running;
    assert.is(r.code, 1, r.err);
    // Which request the cut catches (the wait, or one still under way as the container starts) varies; each names the host.
    assert.match(r.err, /long +failed: host far: lost the (node's container|engine while [a-z' ]+): /, r.err);
    assert.match(await planText(dir), /run +long /);
  } finally {
    // The engine itself is still here: what the cut left running there goes by hand.
    for (const c of await ours('mlepipe.node=long')) await docker.getContainer(c.Id).remove({ force: true });
    await sshd.start();
  }
  await writeFile(join(dir, 'mlepipe.config.yaml'), project(0));
  const again = await run(dir);
  assert.is(again.code, 0, again.err);
  assert.equal((await entries(dir)).long, { x: 'done\n' });
});

test('TLS: with the CA, certificate and key the engine answers; with another CA the error says TLS', async () => {
  const dir = await tmpProject(
    {
      'e.yaml':
        "name: t\nstages:\n  good: { uses: shell, on: safe, with: { run: 'echo ok > $MLEPIPE_OUT/x' } }\n  bad: { uses: shell, on: wrong, with: { run: 'echo bad > $MLEPIPE_OUT/x' } }\n",
    },
    settings(
      `  safe: { docker: "tcp://127.0.0.1:${tls.port}", image: "${IMAGE}", tls: { ca: "${certs.ca}", cert: "${certs.cert}", key: "${certs.key}" } }\n` +
        `  wrong: { docker: "tcp://127.0.0.1:${tls.port}", image: "${IMAGE}", tls: { ca: "${certs.otherCa}", cert: "${certs.cert}", key: "${certs.key}" } }\n`,
    ),
  );
  const r = await run(dir, { keepGoing: true });
  assert.is(r.code, 1, r.err);
  assert.match(r.err, /good +done|✔ +good/);
  assert.match(
    r.err,
    /bad +failed: host wrong \(tcp:\/\/127\.0\.0\.1:\d+\) is unreachable: TLS failed \((SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE)\)/,
  );
  assert.equal((await entries(dir, ['good'])).good, { x: 'ok\n' });
  // mlepipe hosts reaches each host with its own settings: key and known_hosts for SSH, certificates for TLS.
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    const io = memoryIO();
    assert.is(await hostsCommand({}, io), 3);
    const state = Object.fromEntries(
      io.stdout.map((l) => [l.split(' ')[0], l.includes('✔') ? 'ok' : l.replace(/^.*✖ /, '')]),
    );
    assert.is(state.tcpbox, 'ok');
    assert.is(state.sshbox, 'ok');
    assert.is(state.safe, 'ok');
    assert.match(state.wrong, /^unreachable: TLS failed/);
  } finally {
    process.chdir(cwd);
  }
});

test.run();
