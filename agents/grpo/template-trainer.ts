// The clipped GRPO objective for the template policy, on a CPU:
//   J(θ) = mean over policy turns of min(r·A, clip(r, 1 − ε_low, 1 + ε_high)·A) − β·(log π_θ − log π_ref)
// with r = π_θ(a|s) / π_old(a|s). Only the policy's own decisions carry loss
// (observations are the environment's); masked trajectories arrive with no samples.
import { addLogProbGradient, adamAscend, probabilities, type TemplateCheckpoint } from '../policies/template/model.js';

export interface TrainSample {
  features: number[];
  action: number;
  /** log π_old(a|s) when sampled. */
  logprob: number;
  advantage: number;
}

export interface UpdateOptions {
  lr: number;
  clipLow: number;
  clipHigh: number;
  kl: number;
  epochs: number;
  /** The reference policy's weights for the KL term (the initial policy). */
  reference?: number[][];
}

export interface UpdateStats {
  samples: number;
  objective: number;
  clip_fraction: number;
  kl: number;
}

export function templateUpdate(ck: TemplateCheckpoint, samples: readonly TrainSample[], o: UpdateOptions): UpdateStats {
  const live = samples.filter((s) => s.advantage !== 0);
  let objective = 0;
  let clipped = 0;
  let kl = 0;
  if (live.length) {
    for (let epoch = 0; epoch < o.epochs; epoch++) {
      const grad = ck.weights.map((row) => row.map(() => 0));
      objective = 0;
      clipped = 0;
      kl = 0;
      for (const s of live) {
        const p = probabilities(ck.weights, s.features);
        const logp = Math.log(Math.max(p[s.action], 1e-300));
        const ratio = Math.exp(logp - s.logprob);
        const clippedRatio = Math.min(Math.max(ratio, 1 - o.clipLow), 1 + o.clipHigh);
        const unclipped = ratio * s.advantage;
        objective += Math.min(unclipped, clippedRatio * s.advantage);
        // The min picks the clipped branch, whose gradient is zero, only outside the trust region.
        const outside = (s.advantage > 0 && ratio > 1 + o.clipHigh) || (s.advantage < 0 && ratio < 1 - o.clipLow);
        if (outside) clipped++;
        else addLogProbGradient(grad, p, s.features, s.action, (s.advantage * ratio) / live.length);
        if (o.kl > 0 && o.reference) {
          const ref = probabilities(o.reference, s.features);
          kl += logp - Math.log(Math.max(ref[s.action], 1e-300));
          addLogProbGradient(grad, p, s.features, s.action, -o.kl / live.length);
        }
      }
      adamAscend(ck, grad, o.lr);
    }
  }
  ck.step++;
  return {
    samples: live.length,
    objective: live.length ? objective / live.length : 0,
    clip_fraction: live.length ? clipped / live.length : 0,
    kl: live.length ? kl / live.length : 0,
  };
}
