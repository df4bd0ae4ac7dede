// Where a node may run: `on:` names a host or a label of hosts in the
// settings, and `gpus:` must fit at least one of them, or the node could
// never start. Checked when the experiment loads, with positions.
import type { Diagnostic } from '../../core/errors.js';
import { dotted, keyPos, valuePos, type Origins } from '../../core/source.js';
import { suggestion } from '../../core/suggest.js';
import { defaultGpus, gpuCapacity, hostsFor } from './host-settings.js';
import type { Settings, WrittenExperiment, WrittenStage } from './types.js';

export { defaultGpus, gpuCapacity, hostsFor };

/** What the checks of one stage's placement read: the file's origins, the settings and where they came from. */
interface Where {
  readonly origins: Origins;
  readonly settings: Settings;
  /** The settings file, as messages name it. */
  readonly file: string;
}

/** A diagnostic at `path` of the experiment. */
const at = (w: Where, path: string[], message: string): Diagnostic => ({
  pos: valuePos(w.origins, path),
  path: dotted(path),
  message,
});

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
  const errors: Diagnostic[] = [];
  const warnings: Diagnostic[] = [];
  const w: Where = { origins, settings, file: settings.file ?? 'mlepipe.config.yaml' };
  for (const [id, st] of Object.entries(doc.stages ?? {})) {
    if (st.sandbox) {
      const found = sandboxDiagnostic(w, id, st, st.sandbox);
      if (found) (found.warning ? warnings : errors).push(found.diagnostic);
    }
    errors.push(...(st.on === undefined ? localDiagnostics(w, id, st) : placedDiagnostics(w, id, st, st.on, doc)));
  }
  return { errors, warnings };
}

/** `sandbox: { on: }`: a kind that runs no episodes, a label no host carries (a warning), a run no host can hold. */
function sandboxDiagnostic(
  w: Where,
  id: string,
  st: WrittenStage,
  sb: NonNullable<WrittenStage['sandbox']>,
): { diagnostic: Diagnostic; warning?: true } | undefined {
  const hosts = w.settings.hosts;
  const path = ['stages', id, 'sandbox', 'on'];
  const matching = hostsFor(sb.on, hosts);
  const perRun = sb.gpus_per_run ?? 0;
  const cpusPerRun = sb.cpus_per_run ?? 0;
  const gpuFits = (n: string) => gpuCapacity(hosts[n]) >= perRun;
  if (!SANDBOXED.includes(String(st.uses)))
    return {
      diagnostic: at(
        w,
        path,
        `sandbox: { on: } runs the episodes of ${SANDBOXED.join(' and ')} nodes on a host; ${st.uses} nodes run their code here (remove sandbox:)`,
      ),
    };
  if (!matching.length) {
    const undo = `mlepipe run refuses this node; -S ${dotted(['stages', id, 'sandbox'])}=null runs its sandboxes here`;
    return { diagnostic: at(w, path, `${noHost(sb.on, w)}. ${undo}`), warning: true };
  }
  if (perRun > 0 && !matching.some(gpuFits)) {
    // A run that no matching host could ever hold would wait forever: refused here instead.
    const most = Math.max(...matching.map((n) => gpuCapacity(hosts[n])));
    const message = `${perRun} GPUs per run, but no host matching "${sb.on}" lends that many (most: ${most}, in ${w.file})`;
    return { diagnostic: at(w, ['stages', id, 'sandbox', 'gpus_per_run'], message) };
  }
  if (cpusPerRun > 0 && !matching.some((n) => gpuFits(n) && (hosts[n].cpus ?? Infinity) >= cpusPerRun)) {
    // Hosts that count their CPUs and have too few for one run would never take one either.
    const has = matching.filter(gpuFits).map((n) => `${n} has ${hosts[n].cpus}`);
    const message = `${cpusPerRun} CPUs per run, but ${has.join(', ')} (cpus: in ${w.file})`;
    return { diagnostic: at(w, ['stages', id, 'sandbox', 'cpus_per_run'], message) };
  }
  return undefined;
}

/** A node without `on:` runs here: what only a host gives (GPUs, tries after its fault) is refused. */
function localDiagnostics(w: Where, id: string, st: WrittenStage): Diagnostic[] {
  const out: Diagnostic[] = [];
  if (st.gpus !== undefined)
    out.push(
      at(
        w,
        ['stages', id, 'gpus'],
        'gpus: is taken on a host: set on: as well (local nodes use this machine as it is)',
      ),
    );
  if (st.retries !== undefined)
    out.push(at(w, ['stages', id, 'retries'], 'retries: tries a node again after its host fails: set on: as well'));
  return out;
}

/** A node with `on:`: a kind that cannot be placed, more than one GPU for a worker, no such host, too few GPUs. */
function placedDiagnostics(w: Where, id: string, st: WrittenStage, on: string, doc: WrittenExperiment): Diagnostic[] {
  const hosts = w.settings.hosts;
  const refused = placeRefusal(st, doc);
  if (refused) return [at(w, ['stages', id, 'on'], refused)];
  const oneGpu = workerGpuRefusal(st);
  if (oneGpu) return [at(w, ['stages', id, 'gpus'], oneGpu)];
  const names = hostsFor(on, hosts);
  if (!names.length) return [at(w, ['stages', id, 'on'], noHost(on, w))];
  const want = st.gpus ?? defaultGpus(on, hosts);
  const most = Math.max(...names.map((n) => gpuCapacity(hosts[n])));
  if (want <= most) return [];
  const lends = names.map((n) => `${n} lends ${gpuCapacity(hosts[n])}`).join(', ');
  return [at(w, ['stages', id, 'gpus'], `asks for ${want} GPU(s), but ${lends}`)];
}

/** Stage kinds whose episodes' jails can run on a host's engine (`sandbox: { on: }`). */
const SANDBOXED = ['eval', 'grpo'];

function noHost(label: string, w: Where): string {
  const { settings, file: where } = w;
  const known = [...Object.keys(settings.hosts), ...Object.values(settings.hosts).flatMap((h) => h.labels ?? [])];
  return known.length
    ? `no host named or labelled "${label}" in ${where}${suggestion(label, known)} (hosts: ${Object.keys(settings.hosts).join(', ')})`
    : `no host named or labelled "${label}": ${where === 'mlepipe.config.yaml' ? 'no settings file defines hosts:' : `${where} defines no hosts:`}`;
}

/**
 * A trainer worker holds its model on one device (cuda:0): a grpo, sft or eval node that asks for more GPUs
 * would hold the others idle, and full fine-tuning that needs them would still run out of memory on the first.
 */
function workerGpuRefusal(st: WrittenStage): string | undefined {
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
function placeRefusal(st: WrittenStage, doc: WrittenExperiment): string | undefined {
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
