// Trainer worker benchmark on the CPU: the tiny random-weight Qwen3 served by
// a local worker (as a `provider: worker` policy is), measured side by side:
//  - generation: chat completions of 64 new tokens each through the
//    OpenAI-compatible endpoint, completion tokens per second of wall clock;
//  - update: GRPO steps on exact-token batches made of those replies (8
//    trajectories, LoRA rank 8), sequence tokens per second of wall clock,
//    and the worker's own tokens_per_s.
// `--threads N` sets torch's CPU threads (1). The last line is one JSON object.
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startLocalWorker } from '../gpu/trainer/local.js';
import type { Batch } from '../stages/grpo/batch.js';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const threads = arg('threads', 1);
const REQUESTS = 8;
const NEW_TOKENS = 64;
const UPDATES = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const dir = await mkdtemp(join(tmpdir(), 'mlepipe-bench-worker-'));
const load = loadavg()[0];
const t0 = performance.now();
const worker = await startLocalWorker({
  model: { tiny: true, seed: 0 },
  ckptDir: join(dir, 'ckpt'),
  loraRank: 8,
  threads,
  log: () => {},
});
const startS = (performance.now() - t0) / 1000;
try {
  const health = await worker.client.health();
  const client = new OpenAI({ baseURL: `${worker.url}/v1`, apiKey: 'none' });
  const prompts = [
    'the agent reads the csv.',
    'our solution predicts the labels.',
    'a baseline scores submission.csv.',
    'the grader reads twelve features.',
  ];
  const replies: Array<{ prompt_ids: number[]; token_ids: number[]; logprobs: number[] }> = [];
  let generated = 0;
  const g0 = performance.now();
  for (let i = 0; i < REQUESTS; i++) {
    const r = (await client.chat.completions.create({
      model: 'tiny',
      messages: [{ role: 'user', content: prompts[i % prompts.length] }],
      max_tokens: NEW_TOKENS,
      temperature: 1,
      seed: i,
      logprobs: true,
    })) as OpenAI.Chat.ChatCompletion & { prompt_token_ids: number[]; choices: Array<{ token_ids: number[] }> };
    const choice = r.choices[0];
    generated += choice.token_ids.length;
    replies.push({
      prompt_ids: r.prompt_token_ids,
      token_ids: choice.token_ids,
      logprobs: choice.logprobs!.content!.map((t) => t.logprob),
    });
  }
  const genS = (performance.now() - g0) / 1000;

  const trajectories: Batch['trajectories'] = replies.map((t, i) => ({
    id: `g${i % 2}#${i}`,
    group_id: `g${i % 2}`,
    task_id: 'bench',
    sample: i,
    reward: i % 3,
    advantage: (i % 3) - 1,
    turn_advantages: [(i % 3) - 1],
    masked: false,
    mask_reason: null,
    variables: null,
    messages: [
      { role: 'user', content: prompts[i % prompts.length], loss_mask: 0 },
      { role: 'assistant', content: '(exact tokens in turns)', loss_mask: 1 },
    ],
    turns: [t],
  }));
  const tokens = replies.reduce((n, t) => n + t.prompt_ids.length + t.token_ids.length, 0);
  const walls: number[] = [];
  const own: number[] = [];
  for (let k = 1; k <= UPDATES; k++) {
    const batch: Batch = {
      format: 'mlepipe-grpo-batch/1',
      step: k,
      advantage: 'grpo',
      group_size: REQUESTS / 2,
      hyper: { lr: 1e-3, clip_low: 0.2, clip_high: 0.28, kl: 0, temperature: 1 },
      trajectories,
      groups: [0, 1].map((g) => ({ group_id: `g${g}`, mean: 1, std: 1, zero_signal: false })),
      loss_agg_mode: 'token-mean',
      tokenizer: { tokenizer_sha256: health.tokenizer_sha256!, chat_template_sha256: health.chat_template_sha256! },
    };
    const u0 = performance.now();
    const r = await worker.client.update(batch);
    walls.push((performance.now() - u0) / 1000);
    if (typeof r.tokens_per_s === 'number') own.push(r.tokens_per_s);
  }
  const result = {
    model: health.model,
    device: health.device,
    threads,
    cores: cpus().length,
    load_1m_before: Number(load.toFixed(2)),
    load_1m_after: Number(loadavg()[0].toFixed(2)),
    worker_start_s: Number(startS.toFixed(2)),
    generation: {
      requests: REQUESTS,
      completion_tokens: generated,
      seconds: Number(genS.toFixed(2)),
      tokens_per_s: Number((generated / genS).toFixed(1)),
    },
    update: {
      trajectories: trajectories.length,
      tokens_per_step: tokens,
      steps: UPDATES,
      median_step_s: Number(median(walls).toFixed(3)),
      tokens_per_s: Number((tokens / median(walls)).toFixed(1)),
      worker_tokens_per_s: own.length ? Number(median(own).toFixed(1)) : null,
    },
  };
  console.log(
    `generation: ${result.generation.tokens_per_s} tokens/s; update: ${result.update.tokens_per_s} tokens/s (${tokens} tokens a step)`,
  );
  console.log(JSON.stringify(result));
} finally {
  await worker.stop();
  await rm(dir, { recursive: true, force: true });
}
