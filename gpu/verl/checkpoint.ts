// A finished verl job's last weights, laid out as a worker checkpoint: model/
// (weights, config), tokenizer/ and the manifest, which an eval serves through
// a worker and a later verl stage loads as its policy. verl names the last
// step in CHECKPOINTS/latest_checkpointed_iteration.txt and writes Hugging Face
// weights only when the job's checkpoint.save_contents holds hf_model: the SFT
// trainer under global_step_N/huggingface, the PPO trainer under
// global_step_N/actor/huggingface (its actor's checkpoint manager). A node
// that hands on another step than the last (grpo's `select: best-val`) names it.
import { cp, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { EnvError } from '../../core/errors.js';

export type VerlJobKind = 'sft' | 'ppo';

const WEIGHTS = /\.(safetensors|bin)$|^config\.json$|generation_config\.json$|model\.safetensors\.index\.json$/;

const hfDir = (checkpoints: string, step: number, kind: VerlJobKind) =>
  join(checkpoints, `global_step_${step}`, ...(kind === 'ppo' ? ['actor'] : []), 'huggingface');

/** The steps whose Hugging Face weights the job left (what a choice among its checkpoints can hand on). */
export async function verlStepsWithWeights(checkpoints: string, kind: VerlJobKind): Promise<number[]> {
  const steps = (await readdir(checkpoints).catch(() => [] as string[])).flatMap((n) => {
    const m = /^global_step_(\d+)$/.exec(n);
    return m ? [Number(m[1])] : [];
  });
  const present = await Promise.all(
    steps.map(async (s) =>
      (await readdir(hfDir(checkpoints, s, kind)).catch(() => [] as string[])).includes('config.json'),
    ),
  );
  return steps.filter((_, i) => present[i]).sort((a, b) => a - b);
}

export async function collectVerlCheckpoint(
  checkpoints: string,
  dest: string,
  kind: VerlJobKind,
  chosen?: number,
): Promise<{ step: number }> {
  const tracker = join(checkpoints, 'latest_checkpointed_iteration.txt');
  const step = chosen ?? Number((await readFile(tracker, 'utf8').catch(() => '')).trim());
  const hf = hfDir(checkpoints, step, kind);
  const files = step > 0 ? await readdir(hf).catch(() => []) : [];
  const setting = kind === 'ppo' ? 'actor_rollout_ref.actor.checkpoint.save_contents' : 'checkpoint.save_contents';
  if (!files.includes('config.json'))
    throw new EnvError(
      `verl's ${kind === 'ppo' ? 'GRPO' : 'SFT'} job left no Hugging Face weights (${step > 0 ? `${hf}/config.json is missing` : `${tracker} names no step`}): ${setting} must hold hf_model${chosen !== undefined ? ', and every checkpoint a choice among them needs kept' : ''}`,
    );
  await cp(hf, join(dest, 'model'), { recursive: true });
  await cp(hf, join(dest, 'tokenizer'), {
    recursive: true,
    filter: (src) => src === hf || !WEIGHTS.test(src.slice(hf.length + 1)),
  });
  await writeFile(
    join(dest, 'mlepipe-worker.json'),
    JSON.stringify({ format: 'mlepipe-worker-checkpoint/1', base: { path: join(dest, 'model') }, lora: null }, null, 2),
  );
  return { step };
}
