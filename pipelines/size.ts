// How much work each node of a plan is (stages' `size`), in graph order so that each node sees what its
// inputs will hold: a cached input's entry counted, else the input's own size, else "unknown" for what its
// stage gives.
import { dirname } from 'node:path';
import type { Artifact, Count, OutputSize, WorkAmount, WorkSize } from '../stages/contract.js';
import { getStage } from '../stages/registry.js';
import { countText, entrySize, total } from '../stages/shared/size.js';
import type { Plan } from './plan.js';

/** The artifacts sized in OutputSize: a stage without a size gives them in unknown numbers. */
const SIZED: readonly Artifact[] = ['tasks', 'split', 'trajectories'];

export function planSizes(plan: Plan): Map<string, WorkSize | undefined> {
  const exp = plan.experiment;
  const sizes = new Map<string, WorkSize | undefined>();
  const holds = new Map<string, OutputSize>();
  const actions = new Map(plan.nodes.map((p) => [p.node.id, p.action]));
  for (const id of plan.graph.order) {
    const node = plan.graph.nodes.get(id)!;
    const stage = getStage(node.kind);
    const size = stage?.size?.(node.params as never, {
      inputs: node.inputs.map((i) => holds.get(i) ?? {}),
      experimentDir: dirname(exp.file),
      models: exp.models,
      ...(node.stage.on === undefined ? {} : { placedGpus: node.stage.gpus }),
      ...(node.stage.sandbox?.gpusPerRun ? { sandboxGpusPerRun: node.stage.sandbox.gpusPerRun } : {}),
    });
    sizes.set(id, size);
    const gives = typeof stage?.flow.gives === 'function' ? stage.flow.gives(node.params as never) : stage?.flow.gives;
    const unknown = Object.fromEntries((gives ?? []).filter((a) => SIZED.includes(a)).map((a) => [a, undefined]));
    const estimate: OutputSize = { ...unknown, ...size?.gives };
    // A finished entry is counted: what it holds is known, not estimated.
    holds.set(
      id,
      actions.get(id) === 'cached' ? { ...estimate, ...entrySize(plan.store.entryDir(node.key)) } : estimate,
    );
  }
  return sizes;
}

/** Whether a size says anything: a node of no work on no GPU (an ablation's table) shows none. */
export const hasWork = (size: WorkSize | undefined): size is WorkSize =>
  !!size && (size.work.length > 0 || size.gpus !== 0);

/** `24 tasks; no GPU` or `128 rollouts (8 steps × 4 tasks × groups of 4); 8 GPUs, ≤ 12 GPU-hours (…)`. */
export function workText(size: WorkSize): string {
  const amounts = size.work.map((w) => `${countText(w.n)} ${w.unit}${w.of ? ` (${w.of})` : ''}`);
  const gpus =
    size.gpus === undefined
      ? "GPUs: this machine's, if any"
      : size.gpus === 0
        ? 'no GPU'
        : `${size.gpus} GPU${size.gpus === 1 ? '' : 's'}`;
  const hours = size.gpuHours ? `, ${countText(size.gpuHours.n)} GPU-hours (${size.gpuHours.of})` : '';
  return `${amounts.join(', ')}${amounts.length ? '; ' : ''}${gpus}${hours}`;
}

/** One line for the nodes to run together: each unit summed, and what they need of GPUs. */
export function totalText(sizes: readonly (WorkSize | undefined)[]): string {
  const units = new Map<string, Count[]>();
  for (const s of sizes) for (const w of s?.work ?? []) units.set(w.unit, [...(units.get(w.unit) ?? []), w.n]);
  const amounts = [...units].map(([unit, ns]) => {
    const known = ns.filter((n) => n !== undefined);
    const sum = known.length ? `${countText(total(known))}${known.length < ns.length ? ' + ?' : ''}` : '?';
    return `${sum} ${unit}`;
  });
  const gpuNodes = sizes.filter((s) => s && s.gpus !== 0).length;
  const unsized = sizes.filter((s) => !s).length;
  const hours = sizes.map((s) => s?.gpuHours?.n).filter((h) => h !== undefined);
  const gpus = !gpuNodes
    ? 'no node needs a GPU'
    : `${gpuNodes} node${gpuNodes === 1 ? '' : 's'} may use GPUs${hours.length ? `, ${countText(total(hours))} GPU-hours by the episodes' time budgets` : ''}`;
  const rest = unsized
    ? `; ${unsized} node${unsized === 1 ? '' : 's'} whose size shows only as ${unsized === 1 ? 'it runs' : 'they run'}`
    : '';
  return `work to run: ${amounts.length ? `${amounts.join(', ')}; ` : ''}${gpus}${rest}`;
}

/** The size as `plan --json` gives it: unknown counts as null, bounds marked `at_most`. */
export function sizeJson(size: WorkSize): unknown {
  const count = (c: Count) => (c ? { n: c.n, ...(c.atMost ? { at_most: true } : {}) } : { n: null });
  const amount = (w: WorkAmount) => ({ ...count(w.n), unit: w.unit, ...(w.of ? { of: w.of } : {}) });
  return {
    work: size.work.map(amount),
    gpus: size.gpus ?? null,
    ...(size.gpuHours ? { gpu_hours: amount(size.gpuHours) } : {}),
  };
}
