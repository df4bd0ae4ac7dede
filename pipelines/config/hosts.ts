// Where a node may run: `on:` names a host or a label of hosts in the
// settings, and `gpus:` must fit at least one of them, or the node could
// never start. Checked when the experiment loads, with positions.
import type { Diagnostic } from '../../core/errors.js';
import { dotted, keyPos, valuePos, type Origins } from '../../core/source.js';
import { suggestion } from '../../core/suggest.js';
import type { HostSettings, Settings, WrittenExperiment } from './types.js';

/** Host names `on:` matches: the host of that name, else every host carrying that label. */
export function hostsFor(on: string, hosts: Readonly<Record<string, HostSettings>>): string[] {
  if (hosts[on]) return [on];
  return Object.keys(hosts).filter((n) => hosts[n].labels?.includes(on));
}

/** GPUs a host lends: Infinity for `all` (not counted) , 0 when it declares none. */
export function gpuCapacity(h: HostSettings): number {
  if (h.gpus === 'all') return Infinity;
  if (Array.isArray(h.gpus)) return h.gpus.length;
  return h.gpus ?? 0;
}

/** GPUs a node placed with `on:` takes unless it says: one where the matching hosts lend GPUs, none on CPU hosts. */
export function defaultGpus(on: string, hosts: Readonly<Record<string, HostSettings>>): number {
  return hostsFor(on, hosts).some((n) => gpuCapacity(hosts[n]) > 0) ? 1 : 0;
}

/**
 * Errors refuse the file. Warnings are what loads but cannot run on this machine's settings: a sandbox
 * label no host carries, so that a paper config can place its sandboxes on GPU hosts and still validate
 * and plan on a laptop; `run` refuses such nodes before anything starts (sandboxRefusals).
 */
export function placementDiagnostics(
  doc: WrittenExperiment,
  settings: Settings,
  origins: Origins,
): { errors: Diagnostic[]; warnings: Diagnostic[] } {
  const out: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const where = settings.file ?? 'mlepipe.config.yaml';
  for (const [id, st] of Object.entries(doc.stages ?? {})) {
    if (st.sandbox) {
      const path = ['stages', id, 'sandbox', 'on'];
      const matching = hostsFor(st.sandbox.on, settings.hosts);
      const perRun = st.sandbox.gpus_per_run ?? 0;
      const cpusPerRun = st.sandbox.cpus_per_run ?? 0;
      const gpuFits = (n: string) => gpuCapacity(settings.hosts[n]) >= perRun;
      if (!SANDBOXED.includes(String(st.uses))) {
        out.push({
          pos: valuePos(origins, path),
          path: dotted(path),
          message: `sandbox: { on: } runs the episodes of ${SANDBOXED.join(' and ')} nodes on a host; ${st.uses} nodes run their code here (remove sandbox:)`,
        });
      } else if (!matching.length) {
        warnings.push({
          pos: valuePos(origins, path),
          path: dotted(path),
          message: `${noHost(st.sandbox.on, settings, where)}. mlepipe run refuses this node; -S ${dotted(['stages', id, 'sandbox'])}=null runs its sandboxes here`,
        });
      } else if (perRun > 0 && !matching.some(gpuFits)) {
        // A run that no matching host could ever hold would wait forever: refused here instead.
        const gp = ['stages', id, 'sandbox', 'gpus_per_run'];
        const most = Math.max(...matching.map((n) => gpuCapacity(settings.hosts[n])));
        out.push({
          pos: valuePos(origins, gp),
          path: dotted(gp),
          message: `${perRun} GPUs per run, but no host matching "${st.sandbox.on}" lends that many (most: ${most}, in ${where})`,
        });
      } else if (
        cpusPerRun > 0 &&
        !matching.some((n) => gpuFits(n) && (settings.hosts[n].cpus ?? Infinity) >= cpusPerRun)
      ) {
        // Hosts that count their CPUs and have too few for one run would never take one either.
        const cp = ['stages', id, 'sandbox', 'cpus_per_run'];
        const has = matching.filter(gpuFits).map((n) => `${n} has ${settings.hosts[n].cpus}`);
        out.push({
          pos: valuePos(origins, cp),
          path: dotted(cp),
          message: `${cpusPerRun} CPUs per run, but ${has.join(', ')} (cpus: in ${where})`,
        });
      }
    }
    if (st.on === undefined) {
      if (st.gpus !== undefined) {
        const path = ['stages', id, 'gpus'];
        out.push({
          pos: valuePos(origins, path),
          path: dotted(path),
          message: 'gpus: is taken on a host: set on: as well (local nodes use this machine as it is)',
        });
      }
      if (st.retries !== undefined) {
        const path = ['stages', id, 'retries'];
        out.push({
          pos: valuePos(origins, path),
          path: dotted(path),
          message: 'retries: tries a node again after its host fails: set on: as well',
        });
      }
      continue;
    }
    const path = ['stages', id, 'on'];
    const refused = placeRefusal(st, doc);
    if (refused) {
      out.push({ pos: valuePos(origins, path), path: dotted(path), message: refused });
      continue;
    }
    const oneGpu = workerGpuRefusal(st);
    if (oneGpu) {
      const gp = ['stages', id, 'gpus'];
      out.push({ pos: valuePos(origins, gp), path: dotted(gp), message: oneGpu });
      continue;
    }
    const names = hostsFor(st.on, settings.hosts);
    if (!names.length) {
      out.push({ pos: valuePos(origins, path), path: dotted(path), message: noHost(st.on, settings, where) });
      continue;
    }
    const want = st.gpus ?? defaultGpus(st.on, settings.hosts);
    const most = Math.max(...names.map((n) => gpuCapacity(settings.hosts[n])));
    if (want > most) {
      const gp = ['stages', id, 'gpus'];
      out.push({
        pos: valuePos(origins, gp),
        path: dotted(gp),
        message: `asks for ${want} GPU(s), but ${names.map((n) => `${n} lends ${gpuCapacity(settings.hosts[n])}`).join(', ')}`,
      });
    }
  }
  return { errors: out, warnings };
}

/** Stage kinds whose episodes' jails can run on a host's engine (`sandbox: { on: }`). */
const SANDBOXED = ['eval', 'grpo'];

function noHost(label: string, settings: Settings, where: string): string {
  const known = [...Object.keys(settings.hosts), ...Object.values(settings.hosts).flatMap((h) => h.labels ?? [])];
  return known.length
    ? `no host named or labelled "${label}" in ${where}${suggestion(label, known)} (hosts: ${Object.keys(settings.hosts).join(', ')})`
    : `no host named or labelled "${label}": ${where === 'mlepipe.config.yaml' ? 'no settings file defines hosts:' : `${where} defines no hosts:`}`;
}

/**
 * A trainer worker holds its model on one device (cuda:0): a grpo, sft or eval node that asks for more GPUs
 * would hold the others idle, and full fine-tuning that needs them would still run out of memory on the first.
 */
function workerGpuRefusal(st: NonNullable<WrittenExperiment['stages']>[string]): string | undefined {
  if (!['grpo', 'sft', 'eval'].includes(String(st.uses)) || typeof st.gpus !== 'number' || st.gpus <= 1)
    return undefined;
  const w = (st.with ?? {}) as { trainer?: unknown };
  const what = st.uses === 'eval' ? 'serves its model' : 'trains';
  const instead =
    st.uses === 'eval'
      ? 'serve it on one GPU (gpus: 1)'
      : `train LoRA on one GPU (gpus: 1, lora_rank: above 0 on the model)${st.uses === 'grpo' ? ', or use trainer: verl, which shards full fine-tuning over several' : ''}`;
  return w.trainer === 'verl'
    ? undefined
    : `gpus: ${st.gpus}: the trainer worker this node starts ${what} on one GPU (cuda:0) and would leave ${st.gpus - 1} idle; ${instead}`;
}

/** Stage kinds that run on a host: shell nodes whole; grpo, sft and eval nodes put the trainer workers they start there. */
const PLACEABLE = ['shell', 'grpo', 'sft', 'eval'];

/** Why a stage cannot take `on:`, or undefined when it can. */
function placeRefusal(
  st: NonNullable<WrittenExperiment['stages']>[string],
  doc: WrittenExperiment,
): string | undefined {
  if (!PLACEABLE.includes(String(st.uses)))
    return `on: runs ${PLACEABLE.join(', ')} nodes in this version of mlepipe; ${st.uses} nodes run on this machine (remove on:)`;
  const w = (st.with ?? {}) as { trainer?: unknown; policy?: unknown; policies?: unknown; worker_url?: unknown };
  const models = (doc.models ?? {}) as Record<string, { provider?: unknown } | undefined>;
  if (st.uses === 'eval') {
    // An eval node on a host moves only the workers it starts for its provider: worker policies.
    const names = Array.isArray(w.policies) ? w.policies : [w.policy];
    return names.some((n) => typeof n === 'string' && models[n]?.provider === 'worker')
      ? undefined
      : 'on: places the trainer workers an eval node starts for its provider: worker policies, and this one has none (remove on: to run here)';
  }
  if (st.uses !== 'grpo') return undefined;
  // A grpo node on a host moves only the worker it starts; the rollouts and their sandboxes stay here.
  const starts =
    w.trainer === 'worker' &&
    w.worker_url === undefined &&
    typeof w.policy === 'string' &&
    models[w.policy]?.provider === 'worker';
  return starts
    ? undefined
    : 'on: places the trainer worker a grpo node starts: it needs trainer: worker, a provider: worker policy and no worker_url (remove on: to run here)';
}

/** Hosts written in the shape of earlier versions (ssh:, docker_host:): one clear error each, naming the new shape. */
export function oldHostShape(written: unknown, origins: Origins): Diagnostic[] {
  if (typeof written !== 'object' || written === null) return [];
  const hosts = (written as { hosts?: unknown }).hosts;
  if (typeof hosts !== 'object' || hosts === null) return [];
  const out: Diagnostic[] = [];
  for (const [name, h] of Object.entries(hosts)) {
    if (typeof h !== 'object' || h === null || 'docker' in h) continue;
    const old = ['ssh', 'docker_host'].filter((k) => k in h);
    if (!old.length) continue;
    const path = ['hosts', name, old[0]];
    out.push({
      pos: keyPos(origins, path) ?? valuePos(origins, path),
      path: dotted(['hosts', name]),
      message: `${old.join(' and ')} ${old.length > 1 ? 'are' : 'is'} the old shape of a host; write docker: ssh://USER@HOST[:PORT] (or tcp://HOST:PORT, unix:///PATH.sock) with gpus:, labels:, image:, env:`,
    });
  }
  return out;
}
