// A log-linear policy π(a | s) = softmax(W φ(s) / τ) over the template
// actions, its gradients, and a checkpoint that is plain JSON.
import { Rng } from '../../../core/random.js';

export interface TemplateCheckpoint {
  format: 'mlepipe-template-policy/1';
  actions: string[];
  features: string[];
  /** weights[action][feature] */
  weights: number[][];
  /** Adam moments and step, so that a resumed run continues the same optimisation. */
  adam: { m: number[][]; v: number[][]; t: number };
  /** Training steps taken. */
  step: number;
}

export function initCheckpoint(actions: readonly string[], features: readonly string[]): TemplateCheckpoint {
  const zeros = () => actions.map(() => features.map(() => 0));
  return {
    format: 'mlepipe-template-policy/1',
    actions: [...actions],
    features: [...features],
    weights: zeros(),
    adam: { m: zeros(), v: zeros(), t: 0 },
    step: 0,
  };
}

/** Action probabilities at temperature τ (τ = 0: all mass on the best action). */
export function probabilities(w: readonly number[][], phi: readonly number[], temperature = 1): number[] {
  const logits = w.map((row) => row.reduce((s, x, j) => s + x * phi[j], 0));
  if (temperature <= 0) {
    const best = logits.indexOf(Math.max(...logits));
    return logits.map((_, i) => Number(i === best));
  }
  const m = Math.max(...logits);
  const e = logits.map((l) => Math.exp((l - m) / temperature));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

export function sample(p: readonly number[], rng: Rng): number {
  let u = rng.next();
  for (let i = 0; i < p.length; i++) {
    u -= p[i];
    if (u < 0) return i;
  }
  return p.length - 1;
}

export function entropy(p: readonly number[]): number {
  return -p.reduce((s, x) => s + (x > 0 ? x * Math.log(x) : 0), 0);
}

/** ∂ log π(a|s) / ∂W = (e_a − π(·|s)) ⊗ φ(s), added into `grad` scaled by `scale`. */
export function addLogProbGradient(
  grad: number[][],
  p: readonly number[],
  phi: readonly number[],
  action: number,
  scale: number,
): void {
  for (let i = 0; i < p.length; i++) {
    const c = ((i === action ? 1 : 0) - p[i]) * scale;
    if (c === 0) continue;
    for (let j = 0; j < phi.length; j++) grad[i][j] += c * phi[j];
  }
}

/** One Adam step that ascends `grad` (the objective's gradient). */
export function adamAscend(
  ck: TemplateCheckpoint,
  grad: number[][],
  lr: number,
  b1 = 0.9,
  b2 = 0.999,
  eps = 1e-8,
): void {
  ck.adam.t++;
  const { m, v, t } = ck.adam;
  for (let i = 0; i < grad.length; i++) {
    for (let j = 0; j < grad[i].length; j++) {
      m[i][j] = b1 * m[i][j] + (1 - b1) * grad[i][j];
      v[i][j] = b2 * v[i][j] + (1 - b2) * grad[i][j] ** 2;
      const mh = m[i][j] / (1 - b1 ** t);
      const vh = v[i][j] / (1 - b2 ** t);
      ck.weights[i][j] += (lr * mh) / (Math.sqrt(vh) + eps);
    }
  }
}
