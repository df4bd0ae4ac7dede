// Rules for stages that train on verl: their model entry says where the weights are, a CPU run's model is one
// vLLM's CPU build can serve, and the model fits the GPUs the stage asks for.
import type { Diagnostic } from '../../../core/errors.js';
import type { ModelSpec } from '../../../core/models.js';
import { dotted, keyPos, valuePos, type Path } from '../../../core/source.js';
import { CONTEXT_TOKENS, type GrpoParams } from '../../../stages/grpo/index.js';
import { verlModelPath } from '../../../gpu/verl/overrides.js';
import { layoutFor } from '../../../gpu/verl/scale.js';
import { readModelShape, vllmCpuProblem } from '../../../gpu/verl/cpu.js';
import { isPlainObject, setPath } from '../../config/merge.js';
import { cartesian } from '../../compile/graph.js';
import { stageEntries, type Rule } from './types.js';

/** The models: entry a stage trains on verl (a grpo stage's policy, an sft stage's model), if it trains on verl. */
function verlModel(uses: string, p: Record<string, unknown>): string | undefined {
  const verl = p.trainer === 'verl' || (uses === 'grpo' && p.trainer === 'verl-export');
  const name = uses === 'grpo' ? p.policy : uses === 'sft' ? p.model : undefined;
  return verl && typeof name === 'string' ? name : undefined;
}

/**
 * verl loads the weights itself (actor_rollout_ref.model.path, the SFT trainer's model.path): a grpo
 * stage with trainer: verl or verl-export, or an sft stage with trainer: verl, needs its entry to say
 * where they are. The label in model: names what an endpoint serves, not weights.
 */
export const verlWeights: Rule = ({ doc, params, origins }) => {
  const out: Diagnostic[] = [];
  const models = (isPlainObject(doc.models) ? doc.models : {}) as Record<string, ModelSpec>;
  const reported = new Set<string>();
  for (const [id, st] of stageEntries(doc)) {
    const p = params.get(id);
    const name = p && verlModel(st.uses, p);
    if (!p || !name) continue;
    const m = models[name];
    // An undefined name is reported by the reference check; a tiny: entry is written by the node itself.
    if (
      !isPlainObject(m) ||
      typeof m.path === 'string' ||
      (m.provider === 'worker' && m.tiny !== undefined) ||
      reported.has(name)
    )
      continue;
    // A full-weight checkpoint of a stage in needs: is a model folder too; a LoRA checkpoint holds only an adapter.
    if (m.provider === 'worker' && typeof m.checkpoint === 'string' && !m.lora_rank) continue;
    reported.add(name);
    const why =
      m.provider === 'worker' && typeof m.checkpoint === 'string'
        ? `its checkpoint: ${m.checkpoint} is a LoRA adapter (lora_rank: ${m.lora_rank}), which verl cannot load as the policy's weights; train that stage with lora_rank: 0, or give path: to merged weights`
        : 'this entry names none';
    out.push({
      pos: keyPos(origins, ['models', name]),
      path: dotted(['models', name]),
      message: `stage ${id} trains ${name} with trainer: ${p.trainer}, which loads its weights from path: (a Hugging Face model folder, or a hub id such as Qwen/Qwen3-8B), a full-weight checkpoint: of a stage in needs:, or tiny: (a tiny random model the node writes); ${why}`,
    });
  }
  return out;
};

/**
 * A CPU run (verl: { device: cpu }) serves its policy with vLLM's CPU build, whose attention kernels take
 * heads of 32 or more: a path: model with smaller ones is refused at the stage's verl.device, before a Ray
 * head starts and vLLM's server dies on its first request. A checkpoint is checked when its node runs.
 */
export const verlCpuModels: Rule = ({ doc, params, origins, experimentDir }) => {
  const out: Diagnostic[] = [];
  const models = (isPlainObject(doc.models) ? doc.models : {}) as Record<string, ModelSpec>;
  for (const [id, st] of stageEntries(doc)) {
    const p = params.get(id);
    const name = p && verlModel(st.uses, p);
    const v = p?.verl as { device?: string } | undefined;
    const m = name ? models[name] : undefined;
    if (!name || !isPlainObject(v) || v.device !== 'cpu' || !isPlainObject(m) || typeof m.path !== 'string') continue;
    const shape = readModelShape(verlModelPath(m, experimentDir));
    const why = shape && vllmCpuProblem(shape);
    const at: Path = ['stages', id, 'with', 'verl', 'device'];
    if (why)
      out.push({
        pos: valuePos(origins, at),
        path: dotted(at),
        message: `stage ${id} runs ${name} (${m.path}) on vLLM's CPU build: ${why}`,
      });
  }
  return out;
};

/**
 * A verl run whose per-GPU memory estimate (gpu/verl/scale.ts) fits no layout on the stage's
 * cluster is refused here, before anything is generated, rather than hours in at verl's first update.
 * Each ablation variant of the stage is checked too (a matrix over policy: or verl:), reported at the
 * ablation's matrix with the variant's values.
 */
export const verlFits: Rule = ({ doc, params, origins, experimentDir }) => {
  const out: Diagnostic[] = [];
  const models = (isPlainObject(doc.models) ? doc.models : {}) as Record<string, ModelSpec>;
  const stages = stageEntries(doc);
  for (const [id, st] of stages) {
    const base = params.get(id);
    if ((st.uses !== 'grpo' && st.uses !== 'sft') || !base) continue;
    const variants: Array<{ p: Record<string, unknown>; at: Path; label?: string }> = [];
    const own: Path =
      (st.with as Record<string, unknown> | undefined)?.verl !== undefined
        ? ['stages', id, 'with', 'verl']
        : ['stages', id, 'with', st.uses === 'sft' ? 'model' : 'policy'];
    variants.push({ p: base, at: own });
    for (const [abId, ab] of stages) {
      const matrix = (ab as { matrix?: Record<string, unknown[]> }).matrix;
      if (ab.uses !== 'ablate' || (ab as { target?: string }).target !== id || !isPlainObject(matrix)) continue;
      for (const combo of cartesian(matrix as Record<string, unknown[]>)) {
        const p = structuredClone(base);
        for (const [k, v] of Object.entries(combo)) setPath(p, k.split('.'), structuredClone(v));
        variants.push({
          p,
          at: ['stages', abId, 'matrix'],
          label: Object.entries(combo)
            .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
            .join(', '),
        });
      }
    }
    for (const { p, at, label } of variants) {
      const why = doesNotFit(st.uses, p, models, experimentDir);
      if (why)
        out.push({
          pos: keyPos(origins, at),
          path: dotted(at),
          message: `stage ${id}${label ? ` (${label})` : ''}: ${why}`,
        });
    }
  }
  return out;
};

/**
 * Why a stage's verl run fits no layout, or undefined (not on verl, no weights named yet, a model of
 * unknown shape, or it fits). GRPO is held to its trajectories' context with the rollout beside
 * training; SFT to max_length, training only.
 */
function doesNotFit(
  uses: string,
  p: Record<string, unknown>,
  models: Record<string, ModelSpec>,
  experimentDir: string,
): string | undefined {
  const name = verlModel(uses, p);
  const v = p.verl as Partial<GrpoParams['verl']> | undefined;
  if (!name || !isPlainObject(v)) return undefined;
  const m = models[name];
  if (!isPlainObject(m) || (typeof m.path !== 'string' && typeof m.checkpoint !== 'string')) return undefined;
  // A CPU run has no GPU layout; a variant's matrix may replace verl: with an object the schema has not filled in (the stage's own check reports it).
  if ((v as { device?: string }).device === 'cpu') return undefined;
  if (![v.nodes, v.gpus_per_node, v.gpu_memory_gib].every((x) => typeof x === 'number' && x > 0)) return undefined;
  const sft = uses === 'sft';
  if (sft && typeof p.max_length !== 'number') return undefined;
  // A checkpoint is not written yet: its shape is the model's, found by the entry's name.
  const cluster = {
    nodes: v.nodes!,
    gpusPerNode: v.gpus_per_node!,
    gpuMemoryGib: v.gpu_memory_gib!,
    rolloutTp: sft ? 1 : v.rollout_tp,
  };
  const layout = layoutFor(
    typeof m.path === 'string' ? verlModelPath(m, experimentDir) : m.model,
    cluster,
    sft ? (p.max_length as number) : CONTEXT_TOKENS,
    { rollout: !sft },
  );
  return layout && 'error' in layout ? layout.error : undefined;
}
