// Runs per minute of one eval with its sandboxes on one host and on two
// (`sandbox: { on: }`), side by side, from the same generated tasks. The
// hosts are this machine's Docker engine behind two TCP proxies, so the two
// hosts share its cores: the ratio measures what the spreading, the task
// store and the archives cost or save, not more hardware. The eval stage's
// concurrency is the same in both (BENCH_CONCURRENCY, default 2). The load
// average is printed before and after; the last line is one JSON object.
import { execa } from 'execa';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { engineProxy } from '../test/hosts/engines.js';
import { CLI } from '../test/helpers.js';

const load = () => loadavg().map((x) => Number(x.toFixed(2)));
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 2);
const TASKS = 4;
const POLICIES = ['scripted:linear', 'scripted:forest', 'scripted:boosted'];

const exp = (placement: string) => `name: hosts-bench
stages:
  tasks: { uses: generate, with: { seeds: mlebench-tabular, count: ${TASKS}, samples: [80, 120], seed: 3 } }
  verified: { uses: filter, needs: [tasks], with: { val: 0 } }
  agents:
    uses: eval
    needs: [verified]
    ${placement}
    with: { policies: [${POLICIES.join(', ')}], max_turns: 4, step_timeout: 120, concurrency: ${concurrency} }
`;

async function once(hosts: number) {
  const proxies = await Promise.all(Array.from({ length: hosts }, () => engineProxy()));
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-bench-hosts-'));
  try {
    const list = proxies.map((p, i) => `  h${i}: { docker: "tcp://127.0.0.1:${p.port}", labels: [cpu] }`).join('\n');
    await writeFile(
      join(dir, 'mlepipe.config.yaml'),
      `cache: .mlepipe\nsandbox: { backend: docker }\nhosts:\n${list}\n`,
    );
    await writeFile(join(dir, 'e.yaml'), exp('sandbox: { on: cpu }'));
    // Each run from an empty cache (the placement is not in the eval's key): only the agents stage is timed.
    // Not spawnSync: the proxies live in this process and must keep forwarding while the CLI runs.
    const r = await execa(process.execPath, [CLI, 'run', 'e.yaml'], {
      cwd: dir,
      env: { ...process.env, CI: 'true' },
      reject: false,
    });
    if (r.exitCode !== 0) throw new Error(`eval on ${hosts} host(s) failed: ${r.stderr}`);
    // The node's own duration from the lock file, in ms: the progress line rounds it to whole seconds.
    const lock = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8')) as {
      nodes: Record<string, { durationMs?: number }>;
    };
    const agentsS = +((lock.nodes.agents?.durationMs ?? NaN) / 1000).toFixed(2);
    const runs = TASKS * POLICIES.length;
    return { hosts, runs, agents_s: agentsS, runs_per_min: +((runs / agentsS) * 60).toFixed(1) };
  } finally {
    for (const p of proxies) p.cut();
    await rm(dir, { recursive: true, force: true });
  }
}

const before = load();
const one = await once(1);
const two = await once(2);
const after = load();
console.log(
  `eval of ${one.runs} runs, concurrency ${concurrency}: 1 host ${one.runs_per_min} runs/min (${one.agents_s} s), 2 hosts ${two.runs_per_min} runs/min (${two.agents_s} s)`,
);
console.log(`load average before ${before.join(' ')}, after ${after.join(' ')}`);
console.log(
  JSON.stringify({
    bench: 'sandbox-hosts',
    concurrency,
    one_host: one,
    two_hosts: two,
    ratio_two_over_one: +(two.runs_per_min / one.runs_per_min).toFixed(2),
    load_before: before,
    load_after: after,
  }),
);
