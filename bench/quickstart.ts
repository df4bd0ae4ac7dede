// The README's main job, timed from an empty cache through the built CLI:
// wall time (goal < 90 s on 2 cores), the agents stage's rollouts per minute
// and its warm jails per rollout. With BENCH_BASELINE=1 the same run follows
// with warm grading and jail reuse turned off (MLEPIPE_COLD_GRADES=1,
// MLEPIPE_JAIL_REUSE=0), so the two are measured side by side. The load
// average is printed before and after; the last line is one JSON object.
import { spawnSync } from 'node:child_process';
import { copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, ROOT } from '../test/helpers.js';
import { jailsInLogs } from './quickstart-jails.js';

const load = () => loadavg().map((x) => Number(x.toFixed(2)));

async function once(env: Record<string, string>) {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-bench-qs-'));
  try {
    await copyFile(join(ROOT, 'experiments', 'quickstart.yaml'), join(dir, 'quickstart.yaml'));
    await writeFile(join(dir, 'mlepipe.config.yaml'), 'cache: .mlepipe\n');
    const t0 = performance.now();
    const r = spawnSync(process.execPath, [CLI, 'run', 'quickstart.yaml'], {
      cwd: dir,
      env: { ...process.env, CI: 'true', ...env },
      encoding: 'utf8',
    });
    const wallS = (performance.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`quickstart failed: ${r.stderr}`);
    const agentsS = Number(/agents\s+done in ([\d.]+)s/.exec(r.stderr)?.[1]);
    if (!Number.isFinite(agentsS))
      throw new Error(`quickstart: no "agents … done in" line in its progress:\n${r.stderr}`);
    const jails = await jailsInLogs(join(dir, '.mlepipe', 'logs'));
    const rollouts = jails.rollouts;
    return {
      wall_s: +wallS.toFixed(1),
      agents_s: agentsS,
      rollouts_per_min: +((rollouts / agentsS) * 60).toFixed(1),
      // Jails started here and those the filter stage handed on: every jail the rollouts ran in.
      jails_per_rollout: +((jails.started + jails.handed) / rollouts).toFixed(2),
      jails_started: jails.started,
      jails_handed: jails.handed,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const before = load();
const now = await once({});
console.log(
  `quickstart: ${now.wall_s} s from an empty cache (goal < 90 s); agents ${now.agents_s} s = ${now.rollouts_per_min} rollouts/min; ${now.jails_per_rollout} warm jails per rollout (${now.jails_started} started, ${now.jails_handed} handed on by the filter stage)`,
);
let baseline: Awaited<ReturnType<typeof once>> | undefined;
if (process.env.BENCH_BASELINE === '1') {
  baseline = await once({ MLEPIPE_COLD_GRADES: '1', MLEPIPE_JAIL_REUSE: '0' });
  console.log(
    `baseline (cold grades, a fresh jail per rollout): ${baseline.wall_s} s; agents ${baseline.agents_s} s = ${baseline.rollouts_per_min} rollouts/min; ${baseline.jails_per_rollout} jails per rollout`,
  );
}
const after = load();
console.log(`load average before ${before.join(' ')}, after ${after.join(' ')}`);
console.log(
  JSON.stringify({
    ...now,
    ...(baseline ? { baseline, speedup: +(baseline.wall_s / now.wall_s).toFixed(2) } : {}),
    load_before: before,
    load_after: after,
  }),
);
