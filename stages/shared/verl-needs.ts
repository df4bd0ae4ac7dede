// What a node that trains on verl (grpo and sft with trainer: verl) needs before it starts: the cluster its
// Ray job goes to answering, or, for a head started on this machine, .venv/verl and the GPUs the job asks for;
// and the weights it loads, which only a head here reads from this machine's disk.
import { readdirSync } from 'node:fs';
import type { Need, PreflightContext } from '../contract.js';
import type { VerlCluster } from './verl-job.js';

/** GPUs this machine shows (the NVIDIA driver's device files); nothing is run to count them. */
export function localGpus(devDir = '/dev'): number {
  try {
    return readdirSync(devDir).filter((f) => /^nvidia\d+$/.test(f)).length;
  } catch {
    return 0;
  }
}

/**
 * The needs of a verl job for the entry `model` (at the stage param `modelParam`), given the cluster keys
 * and this machine's GPU count (`gpus`, for tests).
 */
export function verlNeeds(
  v: VerlCluster & { nodes: number; gpus_per_node: number },
  ctx: PreflightContext,
  model: { name: string; param: readonly string[] },
  gpus: () => number = localGpus,
): Need[] {
  const address = v.ray_address ?? ctx.ray?.address;
  if (address) {
    const cluster: Need[] = /^https?:\/\//.test(address)
      ? [
          {
            what: 'Ray cluster that answers',
            url: address,
            ...(v.ray_address ? { param: ['verl', 'ray_address'] } : {}),
            why: v.ray_address ? undefined : 'ray.address in the settings (or MLEPIPE_RAY_ADDRESS)',
          },
        ]
      : [];
    // The cluster's workers read the weights from their own disks.
    return [...cluster, { what: 'model', model: model.name, param: model.param, use: 'elsewhere' }];
  }
  const needs: Need[] = [
    { what: 'Python environment', env: 'verl', param: ['trainer'], why: 'Ray and vLLM for a Ray head on this machine' },
    { what: 'model', model: model.name, param: model.param, use: 'weights' },
  ];
  if (v.device === 'cuda') {
    const want = v.nodes * v.gpus_per_node;
    const have = gpus();
    if (v.nodes > 1 || want > have)
      needs.push({
        what: 'GPUs',
        lacking: `${v.nodes} × ${v.gpus_per_node} for a Ray head on this machine, which shows ${have}`,
        param: ['verl', v.nodes > 1 ? 'nodes' : 'gpus_per_node'],
        why: 'name a cluster (verl.ray_address, or ray.address in the settings), or ask for fewer',
      });
  }
  return needs;
}
