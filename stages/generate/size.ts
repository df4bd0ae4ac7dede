// How much work a generate node is: the tasks it builds (each up to `attempts` tries).
import { selectSeeds } from '../../seeds/index.js';
import type { SizeContext, WorkSize } from '../contract.js';
import { policyGpus } from '../shared/gpus.js';
import { exactly } from '../shared/size.js';
import type { GenerateParams } from './index.js';

export function generateSize(p: GenerateParams, ctx: SizeContext): WorkSize {
  const seeds = selectSeeds(p.seeds, p.modalities).length;
  const count = p.count ?? (p.per_seed ? p.per_seed * seeds : 60);
  const of = p.count === undefined && p.per_seed ? `${p.per_seed} per seed × ${seeds} seeds` : undefined;
  return {
    work: [{ n: exactly(count), unit: 'tasks built', ...(of ? { of } : {}) }],
    // The llm backend's model holds a GPU here when it is a worker entry served on this machine.
    ...(p.backend === 'procedural' || policyGpus(p.model ? [p.model] : [], ctx.models) === 0 ? { gpus: 0 } : {}),
    // A task that fails every attempt is left out.
    gives: { tasks: { n: count, atMost: true } },
  };
}
