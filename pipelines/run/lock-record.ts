// What a run writes into the experiment's lock file: one entry per finished node, written as each finishes
// (under a lock of its own, since two runs of one experiment may finish nodes at once).
import { sha256 } from '../../core/hash.js';
import { VERSION } from '../../core/version.js';
import { updateLockfile, type LockEntry } from '../cache/lockfile.js';
import type { Manifest } from '../cache/manifest.js';
import type { Plan } from '../plan.js';

/** Adds `entries` to the plan's lock file; with `keep`, the entries of nodes not in it go. */
export type RecordEntries = (entries: Record<string, LockEntry>, keep?: ReadonlySet<string>) => Promise<void>;

export function lockRecorder(plan: Plan): RecordEntries {
  const mutex = plan.store.lockPath(`lockfile-${sha256(plan.lockfile).slice(0, 24)}`);
  const header = { experiment: plan.experiment.name, mlepipe: VERSION };
  return (entries, keep) =>
    updateLockfile(plan.lockfile, mutex, header, (lf) => {
      if (keep) for (const id of Object.keys(lf.nodes)) if (!keep.has(id)) delete lf.nodes[id];
      Object.assign(lf.nodes, entries);
    });
}

export function lockEntry(m: Manifest): LockEntry {
  return {
    key: m.key,
    kind: m.kind,
    version: m.version,
    params: m.params,
    inputs: m.inputs,
    extras: m.extras,
    variant: m.variant,
    outputs: { files: m.files.length, bytes: m.files.reduce((s, f) => s + f.size, 0) },
    metrics: m.metrics,
    finished: m.finished,
    durationMs: m.durationMs,
  };
}
