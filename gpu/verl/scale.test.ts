import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseLayout, layoutFor, layoutOverrides, modelShape, type Layout } from './scale.js';

const H200 = 140;
const on = (nodes: number, gpusPerNode: number, gpuMemoryGib = H200) => ({ nodes, gpusPerNode, gpuMemoryGib });
const layout = (model: string, c: ReturnType<typeof on>, tokens = 32_768) => layoutFor(model, c, tokens) as Layout;

test('Qwen3-8B at 32k tokens: on 8 H200s its sharded state stays on the GPUs; on one it must be offloaded', () => {
  const eight = layout('/models/Qwen3-8B', on(1, 8));
  assert.equal([eight.offload, eight.sp, eight.tokenBudget], [false, 1, 32_768]);
  // 16 B × 8.19e9 parameters over 8 GPUs.
  assert.is(eight.estimate.state, 15.3);
  // vLLM gets what the resident state leaves of 90%: (126 − 15.3) / 140.
  assert.is(eight.gpuMemoryUtilization, 0.79);
  const one = layout('Qwen/Qwen3-8B', on(1, 1));
  assert.equal([one.offload, one.estimate.state], [true, 0]);
  assert.ok(one.estimate.training < 0.9 * H200, JSON.stringify(one));
  // What offload moves to the host: 16 B × 8.19e9 parameters on the one node; nothing on eight GPUs.
  assert.equal([one.estimate.hostOffload, eight.estimate.hostOffload], [122, 0]);
});

test('the larger paper models on a node of eight: 14B keeps its state, 30B-A3B leaves vLLM less', () => {
  const b14 = layout('Qwen/Qwen3-14B', on(1, 8));
  assert.equal([b14.offload, b14.sp], [false, 1]);
  const moe = layout('Qwen/Qwen3-30B-A3B', on(1, 8));
  assert.equal(moe.offload, false);
  assert.ok(moe.gpuMemoryUtilization < eightUtil(), `${moe.gpuMemoryUtilization}`);
});
const eightUtil = () => layout('Qwen/Qwen3-8B', on(1, 8)).gpuMemoryUtilization;

test('Ulysses groups split a trajectory that does not fit one GPU; none fitting is refused with the estimate', () => {
  // 48 GiB GPUs: 32k tokens of 8B activations and logits beside the sharded state exceed one GPU (57 GiB); a pair holds half each.
  const small = layout('Qwen/Qwen3-8B', on(1, 8, 48));
  assert.equal([small.offload, small.sp, small.tokenBudget], [false, 2, 16_384]);
  // 24 GiB: training fits offloaded over 8, but one replica's bf16 weights and KV cache (21.8 GiB) do not fit vLLM's share.
  const none = layoutFor('Qwen/Qwen3-8B', on(1, 8, 24), 32_768) as { error: string };
  assert.match(
    none.error,
    /^no layout of 8\.2B parameters fits 1 × 8 GPUs of 24 GiB at 32768 tokens a trajectory: .* and 21\.8 GiB for the rollout's weights and one trajectory's KV cache \(20\.4 left to vLLM\)/,
  );
  // With the rollout split over 2 GPUs it fits.
  assert.ok(!('error' in (layoutFor('Qwen/Qwen3-8B', { ...on(1, 8, 24), rolloutTp: 2 }, 32_768) as object)));
});

test("a weights folder's config.json gives the shape; a model of unknown shape gets no layout", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-shape-'));
  await writeFile(
    join(dir, 'config.json'),
    JSON.stringify({
      hidden_size: 64,
      num_hidden_layers: 2,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      vocab_size: 1000,
      intermediate_size: 128,
      tie_word_embeddings: true,
    }),
  );
  const s = modelShape(dir)!;
  // Embeddings 1000·64, per layer attention 2·64·64 + 2·64·32 and MLP 3·64·128.
  assert.is(s.params, 1000 * 64 + 2 * (2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 128));
  assert.equal([s.headDim, s.kvHeads], [16, 2]);
  assert.is(layoutFor('someone/unnamed-model', on(1, 8), 32_768), undefined);
  // A checkpoint's label names the model it was trained from.
  assert.is(modelShape('qwen3-8b-seed-sft')?.layers, 36);
  assert.is(modelShape('Qwen/Qwen3-30B-A3B-Base')?.layers, 48);
  assert.is(modelShape('qwen3-80b'), undefined);
  assert.ok('error' in (chooseLayout(s, { ...on(1, 8), rolloutTp: 1 }, 32_768) as object) === false);
});

test('the overrides carry the layout in verl 0.9.1 keys', () => {
  const o = layoutOverrides(layout('Qwen/Qwen3-8B', on(1, 1)));
  for (const k of [
    'actor_rollout_ref.actor.strategy=fsdp2',
    'actor_rollout_ref.actor.use_dynamic_bsz=true',
    'actor_rollout_ref.actor.ppo_max_token_len_per_gpu=32768',
    'actor_rollout_ref.actor.fsdp_config.param_offload=true',
    'actor_rollout_ref.actor.fsdp_config.optimizer_offload=true',
    'actor_rollout_ref.model.enable_gradient_checkpointing=true',
  ])
    assert.ok(o.includes(k), k);
});

test.run();
