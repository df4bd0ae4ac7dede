// The weights a verl job loads for a models: entry, settled (a tiny model even written) before a Ray head starts.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { readTaskView } from '../../agents/scaffolds/public.js';
import { assetPath } from '../../core/assets.js';
import { EnvError, UserError } from '../../core/errors.js';
import { formatJsonl } from '../../core/json-files.js';
import { trainerPython } from '../../gpu/trainer/local.js';
import { verlModelPath } from '../../gpu/verl/overrides.js';
import type { StageContext } from '../contract.js';
import { CHECKPOINT_DIR, weightsFor } from './weights.js';

/** A conversation a tiny model's tokenizer is trained on (the stage's own data). */
export type CorpusRecord = { messages: ReadonlyArray<{ role: string; content: string }> };

/**
 * What verl loads for a models: entry: its path:, the full-weight checkpoint an upstream sft or grpo
 * node saved (its model/ and tokenizer/ folders; the config check refuses a LoRA one), or, for a
 * `tiny: SEED` entry, a tiny random Qwen3 written into the node's item store in the shape vLLM's CPU
 * build serves (mlepipe_worker tiny --preset vllm), its tokenizer trained on the stage's own
 * conversations so that they stay short in tokens.
 */
export async function verlWeightsOf(
  ctx: StageContext<unknown>,
  name: string,
  corpus: () => Promise<readonly CorpusRecord[]>,
): Promise<{ model: string; tokenizer?: string }> {
  const m = ctx.models[name];
  if (m.provider === 'worker' && m.tiny !== undefined) {
    const seed = m.tiny;
    const dir =
      (await ctx.items.get(`verl-tiny ${seed}`)) ??
      (await ctx.items.put(`verl-tiny ${seed}`, async (d) => {
        const texts = join(d, 'corpus.jsonl');
        await writeFile(texts, formatJsonl((await corpus()).map((r) => ({ messages: r.messages }))));
        const args = [
          '-m',
          'mlepipe_worker',
          'tiny',
          join(d, 'model'),
          '--preset',
          'vllm',
          '--corpus',
          texts,
          '--seed',
          String(seed),
        ];
        const r = await execa(trainerPython(), args, {
          cwd: assetPath('gpu/worker'),
          reject: false,
          all: true,
          cancelSignal: ctx.signal,
          timeout: 600_000,
        });
        if (r.exitCode !== 0)
          throw new EnvError(
            `model ${name}: writing the tiny model failed: ${String(r.all).trim().split('\n').slice(-3).join(' ')}`,
          );
        ctx.log(`model ${name}: ${String(r.stdout).trim().split('\n').pop()}`);
      }));
    return { model: join(dir, 'model') };
  }
  if (m.provider !== 'worker' || m.checkpoint === undefined) return { model: verlModelPath(m, ctx.experimentDir) };
  const w = weightsFor(ctx, name, m) as { dir: string };
  if (!existsSync(join(w.dir, 'model', 'config.json')))
    throw new UserError(
      `model ${name}: ${m.checkpoint}'s ${CHECKPOINT_DIR}/ holds no full weights (model/config.json): verl loads a model folder, not an adapter`,
    );
  return { model: join(w.dir, 'model'), tokenizer: join(w.dir, 'tokenizer') };
}

/** A GRPO stage's tasks as a tiny model's tokenizer corpus: their descriptions, which fill most of each prompt. */
export async function taskCorpus(tasks: ReadonlyArray<{ id: string; dir: string }>): Promise<CorpusRecord[]> {
  const out: CorpusRecord[] = [];
  for (const t of tasks)
    out.push({ messages: [{ role: 'user', content: (await readTaskView(t.dir, t.id)).description }] });
  return out;
}
