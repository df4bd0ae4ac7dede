// The GPUs a node holds while it runs, as far as its params tell: for the plan's size of a node.
import type { ModelSpec } from '../../core/models.js';

/**
 * 0 when no policy needs a GPU here (scripted and template policies run on CPUs, an openai entry is called
 * where it is served); undefined when one may (a worker entry is served on whatever this machine has).
 */
export function policyGpus(policies: readonly string[], models: Readonly<Record<string, ModelSpec>>): 0 | undefined {
  return policies.some((name) => models[name]?.provider === 'worker') ? undefined : 0;
}

/** A trainer's GPUs: none for the template policy, a tiny model or a verl CPU run; a verl cluster's; a placed node's. */
export function trainerGpus(
  p: {
    readonly trainer: string;
    readonly verl?: { readonly nodes?: number; readonly gpus_per_node?: number; readonly device?: string };
    readonly model?: string;
  },
  models: Readonly<Record<string, ModelSpec>>,
  placedGpus: number | undefined,
): number | undefined {
  if (p.trainer === 'template') return 0;
  if (p.trainer.startsWith('verl'))
    return p.verl?.device === 'cpu' ? 0 : (p.verl?.nodes ?? 1) * (p.verl?.gpus_per_node ?? 8);
  if (placedGpus !== undefined) return placedGpus;
  const m = p.model === undefined ? undefined : models[p.model];
  return m?.provider === 'worker' && m.tiny !== undefined ? 0 : undefined;
}
