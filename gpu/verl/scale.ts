// How a verl run is laid out on its GPUs, and whether it fits: the settings a
// verl user sets for long multi-turn trajectories (FSDP2, remove-padding,
// gradient checkpointing, dynamic batch size with a token budget, Ulysses
// sequence parallelism, offload, the rollout's memory share), chosen from the
// model's shape, the cluster and the trajectory length by a per-GPU memory
// estimate. verl itself checks none of this before it starts: a layout that
// does not fit fails with an out-of-memory error after the first rollout.
//
// The estimate, per GPU, in bytes (docs/training.md#memory-on-the-gpus):
//   training = state + gathered + activations + logits
//     state        16 B per parameter (fp32 weights, fp32 gradients, Adam's two moments), sharded
//                  over every GPU by FSDP; 0 with parameter and optimizer offload
//     gathered     2 layers of bf16 weights (FSDP gathers one layer and prefetches the next)
//     activations  with checkpointing: each layer's bf16 input for every token (2·h·L B/token),
//                  plus one layer recomputed (34·h B/token)
//     logits       bf16 logits and their fp32 log-softmax (6·V B/token)
//     over the token budget of one micro-batch on this GPU (the trajectory over the Ulysses group)
//   rollout  = state (it stays on the GPU unless offloaded) + vLLM's share, which must hold the
//     bf16 weights of one replica's slice and the KV cache of one whole trajectory
// and, per node, in host memory: hostOffload = the offloaded state (16 B per parameter over the
// nodes), 0 without offload; the job's entrypoint compares it with the nodes' memory before verl
// starts (mlepipe_verl/launch.py).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isObject, readJsonSync } from '../../core/json-files.js';

const GIB = 2 ** 30;

/** The size in billions of parameters a model's name or path gives (Qwen3-8B, Qwen3-30B-A3B: the total), if any. */
export function paramsBillions(model: string): number | undefined {
  const m = /(?:^|[^a-z0-9.])(\d+(?:\.\d+)?)b(?![a-z])/i.exec(model.split('/').pop() ?? model);
  return m ? Number(m[1]) : undefined;
}

/**
 * Tensor parallelism for a rollout replica. verl's default is 2, and it makes
 * nodes × gpus_per_node / (tp × dp × pp) replicas: 0 on one GPU, and half the
 * replicas an 8B model needs on eight. The bf16 weights of up to 16B parameters
 * leave room for the KV cache of 32k-token trajectories on one 80 GB or larger
 * GPU; larger models split over 2, 4 or 8. Never more than a node's GPUs (a
 * replica stays within its node).
 */
export function rolloutTp(model: string, gpusPerNode: number): number {
  const b = paramsBillions(model) ?? 0;
  const want = b <= 16 ? 1 : b <= 40 ? 2 : b <= 80 ? 4 : 8;
  return Math.min(want, gpusPerNode);
}

export interface ModelShape {
  params: number;
  hidden: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  vocab: number;
}

/** Shapes of the models the paper configs train, from their config.json, for a policy given by hub id. */
const KNOWN: Record<string, ModelShape> = {
  'qwen3-0.6b': { params: 0.6e9, hidden: 1024, layers: 28, heads: 16, kvHeads: 8, headDim: 128, vocab: 151936 },
  'qwen3-8b': { params: 8.19e9, hidden: 4096, layers: 36, heads: 32, kvHeads: 8, headDim: 128, vocab: 151936 },
  'qwen3-14b': { params: 14.77e9, hidden: 5120, layers: 40, heads: 40, kvHeads: 8, headDim: 128, vocab: 151936 },
  'qwen3-30b-a3b': { params: 30.53e9, hidden: 2048, layers: 48, heads: 32, kvHeads: 4, headDim: 128, vocab: 151936 },
};

type HfConfig = Partial<
  Record<
    | 'hidden_size'
    | 'num_hidden_layers'
    | 'num_attention_heads'
    | 'num_key_value_heads'
    | 'head_dim'
    | 'vocab_size'
    | 'intermediate_size'
    | 'num_experts'
    | 'moe_intermediate_size',
    number
  >
> & { tie_word_embeddings?: boolean };

/** Parameters counted from a Hugging Face config: embeddings, attention and MLP (every expert of a MoE) per layer. */
function countParams(
  c: Required<Pick<HfConfig, 'hidden_size' | 'num_hidden_layers' | 'num_attention_heads' | 'vocab_size'>> & HfConfig,
): number {
  const h = c.hidden_size;
  const hd = c.head_dim ?? h / c.num_attention_heads;
  const kv = c.num_key_value_heads ?? c.num_attention_heads;
  const attention = 2 * h * c.num_attention_heads * hd + 2 * h * kv * hd;
  const mlp = c.num_experts
    ? c.num_experts * 3 * h * (c.moe_intermediate_size ?? 0) + h * c.num_experts
    : 3 * h * (c.intermediate_size ?? 4 * h);
  return c.vocab_size * h * (c.tie_word_embeddings ? 1 : 2) + c.num_hidden_layers * (attention + mlp);
}

/** The model's shape from the weights folder's config.json, else from its name; undefined when neither says. */
export function modelShape(model: string): ModelShape | undefined {
  const file = join(model, 'config.json');
  if (existsSync(file)) {
    const c = readJsonSync<HfConfig>(file, isObject);
    const { hidden_size, num_hidden_layers, num_attention_heads, vocab_size } = c;
    if (hidden_size && num_hidden_layers && num_attention_heads && vocab_size) {
      return {
        params: countParams({ ...c, hidden_size, num_hidden_layers, num_attention_heads, vocab_size }),
        hidden: hidden_size,
        layers: num_hidden_layers,
        heads: num_attention_heads,
        kvHeads: c.num_key_value_heads ?? num_attention_heads,
        headDim: c.head_dim ?? hidden_size / num_attention_heads,
        vocab: vocab_size,
      };
    }
  }
  // By name: the longest known model the name starts with (Qwen3-8B-Base, qwen3-8b-seed-sft: Qwen3-8B).
  const name = (model.split('/').pop() ?? model).toLowerCase();
  const key = Object.keys(KNOWN)
    .filter((k) => name === k || name.startsWith(`${k}-`))
    .sort((a, b) => b.length - a.length)[0];
  return key ? KNOWN[key] : undefined;
}

export interface Cluster {
  nodes: number;
  gpusPerNode: number;
  gpuMemoryGib: number;
  /** Rollout tensor parallelism (gpu/verl/overrides.ts rolloutTp). */
  rolloutTp: number;
}

export interface Layout {
  offload: boolean;
  sp: number;
  /** Tokens of one micro-batch per GPU in training (ppo_max_token_len_per_gpu). */
  tokenBudget: number;
  gpuMemoryUtilization: number;
  /** GiB per GPU, rounded to 0.1. */
  estimate: {
    state: number;
    activations: number;
    logits: number;
    training: number;
    rollout: number;
    hostOffload: number;
  };
}

const round1 = (x: number) => Math.round(x * 10) / 10;

function estimate(
  m: ModelShape,
  c: Cluster,
  seqTokens: number,
  offload: boolean,
  sp: number,
): Omit<Layout, 'gpuMemoryUtilization'> & { vllmNeedsGib: number; stateGib: number } {
  const world = c.nodes * c.gpusPerNode;
  const tokenBudget = Math.ceil(seqTokens / sp / 1024) * 1024;
  const state = offload ? 0 : (16 * m.params) / world;
  const gathered = 2 * 2 * (m.params / m.layers);
  const activations = tokenBudget * m.hidden * (2 * m.layers + 34);
  const logits = tokenBudget * m.vocab * 6;
  const training = state + gathered + activations + logits;
  const kvPerToken = 2 * m.layers * m.kvHeads * m.headDim * 2;
  const vllmNeeds = (2 * m.params) / c.rolloutTp + kvPerToken * seqTokens + 2 * GIB;
  return {
    offload,
    sp,
    tokenBudget,
    estimate: {
      state: round1(state / GIB),
      activations: round1(activations / GIB),
      logits: round1(logits / GIB),
      training: round1(training / GIB),
      rollout: round1((state + vllmNeeds) / GIB),
      hostOffload: offload ? round1((16 * m.params) / c.nodes / GIB) : 0,
    },
    vllmNeedsGib: vllmNeeds / GIB,
    stateGib: state / GIB,
  };
}

/**
 * The first layout that fits, trying without offload before with it, and the smallest Ulysses group
 * first (it must divide the node's GPUs and the attention heads). Training may use 90% of a GPU; during
 * rollout vLLM takes what the resident state leaves of 90%, up to 85%, and that must hold its weights
 * and one trajectory's KV cache. A run without rollout (verl's SFT trainer) is held to the training part.
 */
export function chooseLayout(
  m: ModelShape,
  c: Cluster,
  seqTokens: number,
  o: { rollout: boolean } = { rollout: true },
): Layout | { error: string } {
  const usable = 0.9 * c.gpuMemoryGib;
  let best: (ReturnType<typeof estimate> & { vllmGib: number }) | undefined;
  const short = (e: ReturnType<typeof estimate> & { vllmGib: number }) =>
    Math.max(0, e.estimate.training - usable) + (o.rollout ? Math.max(0, e.vllmNeedsGib - e.vllmGib) : 0);
  for (const offload of [false, true]) {
    for (const sp of [1, 2, 4, 8]) {
      if (c.gpusPerNode % sp !== 0 || m.heads % sp !== 0) continue;
      const e = estimate(m, c, seqTokens, offload, sp);
      const util = Math.min(0.85, (usable - e.stateGib) / c.gpuMemoryGib);
      const tried = { ...e, vllmGib: Math.max(0, util * c.gpuMemoryGib) };
      if (!best || short(tried) < short(best)) best = tried;
      if (short(tried) > 0) continue;
      return {
        offload,
        sp,
        tokenBudget: e.tokenBudget,
        gpuMemoryUtilization: Math.floor(util * 100) / 100,
        estimate: e.estimate,
      };
    }
  }
  const b = best!;
  const rollout = o.rollout
    ? ` and ${round1(b.vllmNeedsGib)} GiB for the rollout's weights and one trajectory's KV cache (${round1(b.vllmGib)} left to vLLM)`
    : '';
  return {
    error:
      `no layout of ${(m.params / 1e9).toFixed(1)}B parameters fits ${c.nodes} × ${c.gpusPerNode} GPUs of ${c.gpuMemoryGib} GiB at ${seqTokens} tokens a ${o.rollout ? 'trajectory' : 'sequence'}: ` +
      `the closest (Ulysses ${b.sp}${b.offload ? ', offloaded' : ''}) needs ${b.estimate.training} GiB per GPU to train (${b.estimate.activations} GiB activations, ${b.estimate.logits} GiB logits; at most ${round1(usable)})${rollout}; ` +
      `use more GPUs (verl.gpus_per_node, verl.nodes)${o.rollout ? ', rollout tensor parallelism (verl.rollout_tp)' : ', a shorter max_length'} or a smaller model`,
  };
}

/** The overrides of a layout (keys of verl 0.9.1's ppo_trainer config). */
export function layoutOverrides(l: Layout): string[] {
  const infer = Math.ceil((l.tokenBudget * 1.5) / 1024) * 1024;
  return [
    'actor_rollout_ref.model.use_remove_padding=true',
    'actor_rollout_ref.model.enable_gradient_checkpointing=true',
    'actor_rollout_ref.actor.strategy=fsdp2',
    'actor_rollout_ref.ref.strategy=fsdp2',
    'actor_rollout_ref.actor.use_dynamic_bsz=true',
    `actor_rollout_ref.actor.ppo_max_token_len_per_gpu=${l.tokenBudget}`,
    `actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=${infer}`,
    `actor_rollout_ref.ref.log_prob_max_token_len_per_gpu=${infer}`,
    `actor_rollout_ref.actor.ulysses_sequence_parallel_size=${l.sp}`,
    `actor_rollout_ref.ref.ulysses_sequence_parallel_size=${l.sp}`,
    `actor_rollout_ref.actor.fsdp_config.param_offload=${l.offload}`,
    `actor_rollout_ref.actor.fsdp_config.optimizer_offload=${l.offload}`,
    'actor_rollout_ref.ref.fsdp_config.param_offload=true',
    `actor_rollout_ref.rollout.gpu_memory_utilization=${l.gpuMemoryUtilization}`,
  ];
}

/**
 * The layout for a run of `model` (weights folder or hub id) on the stage's cluster, undefined for a
 * model whose shape neither its config.json nor its name gives (verl's defaults then apply, and the
 * node's log says so), or the reason none fits.
 */
export function layoutFor(
  model: string,
  v: { nodes: number; gpusPerNode: number; gpuMemoryGib: number; rolloutTp?: number },
  seqTokens: number,
  o: { rollout: boolean } = { rollout: true },
): Layout | { error: string } | undefined {
  const shape = modelShape(model);
  if (!shape) return undefined;
  return chooseLayout(shape, { ...v, rolloutTp: v.rolloutTp ?? rolloutTp(model, v.gpusPerNode) }, seqTokens, o);
}
