// The sft stage's verl export against the pinned verl in .venv/verl, on a tiny
// random Qwen3 with a tokenizer trained under Qwen3's real chat template:
// (a) the exported parquet through the dataset verl's SFT trainer builds from
//     the exported overrides: the input ids decode to the conversation, each
//     reply with its reasoning, and the loss mask covers exactly the replies;
// (b) one real step of verl's SFT trainer (verl.trainer.sft_trainer's
//     SFTTrainer, FSDP2 over gloo on the CPU) on that export, whose saved
//     Hugging Face weights become a worker checkpoint.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { parse } from 'yaml';
import { cpuEnv, cpuSftOverrides } from '../../gpu/verl/cpu.js';
import { withOverrides } from '../../gpu/verl/job.js';
import { sftCurve } from '../../gpu/verl/metrics.js';
import { collectVerlCheckpoint } from '../../gpu/verl/checkpoint.js';
import { writeSftExport, type SftExportOptions } from '../../gpu/verl/sft-export.js';
import { ROOT } from '../helpers.js';
import { readScalars } from '../train-log/read.js';

const PY = join(ROOT, '.venv', 'verl', 'bin', 'python');
const DRIVER = join(ROOT, 'gpu', 'verl', 'tests', 'sft_driver.py');
const SYSTEM = 'You are an ML engineer. Solve the task.';
const reply = (reason: string, action: string) => `<think>\n${reason}\n</think>\n\n${action}`;
const CONVERSATIONS = [
  [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'Predict the target of public/train.csv.' },
    {
      role: 'assistant',
      content: reply(
        'The sample submission has the right shape.',
        "```python\nimport pandas as pd\ndf = pd.read_csv('public/train.csv')\nprint(df.shape)\n```",
      ),
    },
    { role: 'user', content: 'exit code 0\nstdout:\n(50, 3)' },
    { role: 'assistant', content: reply('Done.', '<answer>submission.csv</answer>') },
  ],
  [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: 'Predict the target.' },
    { role: 'assistant', content: reply('Look first.', '```python\nprint(1)\n```') },
    { role: 'user', content: 'exit code 0\nstdout:\n1' },
  ],
].map((messages) => ({ messages }));

// Each message as Qwen3's template writes it in the turn it belongs to: a reply with its reasoning.
const turn = (m: { role: string; content: string }) => {
  if (m.role !== 'assistant') return `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
  const [, reason, action] = /^<think>\n(.*)\n<\/think>\n\n([\s\S]*)$/s.exec(m.content)!;
  return `<|im_start|>assistant\n<think>\n${reason}\n</think>\n\n${action}<|im_end|>\n`;
};

let dir = '';
const options = (model: string): SftExportOptions => ({
  model,
  epochs: 1,
  lr: 1e-5,
  schedule: 'cosine',
  warmup: 0,
  maxLength: 1024,
  batchSize: 2,
  microBatchSize: 1,
  maxGradNorm: 1,
  gradientCheckpointing: true,
  seed: 0,
  nodes: 1,
  gpusPerNode: 1,
  gpuMemoryGib: 140,
});

test.before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'verl-sft-'));
  const made = await execa(PY, [DRIVER, 'model', join(dir, 'model')], { reject: false, all: true });
  assert.is(made.exitCode, 0, made.all);
  await writeSftExport(join(dir, 'export'), CONVERSATIONS, CONVERSATIONS, options(join(dir, 'model')));
});
test.after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test("verl's SFT dataset reads the export: the ids decode to the conversation and the loss covers exactly each reply with its reasoning", async () => {
  const overrides = (
    parse(await readFile(join(dir, 'export', 'trainer_overrides.yaml'), 'utf8')) as { overrides: string[] }
  ).overrides;
  // The layout from the tiny model's config.json: its token budget is the whole sequence.
  assert.ok(
    overrides.includes('data.max_token_len_per_gpu=1024') &&
      overrides.includes('engine.strategy=fsdp2') &&
      overrides.includes('model.enable_gradient_checkpointing=true'),
    overrides.join(' '),
  );
  const r = await execa(PY, [DRIVER, 'dataset', join(dir, 'export')], { reject: false, all: true });
  assert.is(r.exitCode, 0, r.all);
  const rows = JSON.parse(r.stdout.trim().split('\n').pop()!) as Array<{
    cls: string;
    decoded: string;
    trained: string[];
    verl_trained: string[];
    whole: string;
  }>;
  assert.is(rows.length, 2);
  for (const [k, row] of rows.entries()) {
    const messages = CONVERSATIONS[k].messages;
    assert.is(row.decoded, messages.map(turn).join(''));
    // Loss on each reply after its generation prompt, through <|im_end|> and the newline the template ends it with.
    assert.equal(
      row.trained,
      messages.filter((m) => m.role === 'assistant').map((m) => turn(m).slice('<|im_start|>assistant\n'.length)),
    );
    assert.is(row.cls, 'ReplySFTDataset');
    // verl's own class renders each reply alone, where Qwen3's template drops its <think> block.
    assert.ok(
      row.verl_trained.every((t) => !t.includes('<think>')),
      row.verl_trained.join('|'),
    );
    // Rendered whole, Qwen3 strips the reasoning of replies before the last user message.
    assert.not.ok(row.whole.includes('The sample submission has the right shape.'));
  }
});

test("one step of verl's SFT trainer on the CPU trains the export and saves Hugging Face weights, laid out as a worker checkpoint", async () => {
  const exp = join(dir, 'export');
  const overrides = (parse(await readFile(join(exp, 'trainer_overrides.yaml'), 'utf8')) as { overrides: string[] })
    .overrides;
  // What a CPU run's export adds (gpu/verl/cpu.ts: no flash-attention, remove-padding or compile), and its
  // environment, whose platform module gpu/verl/tests/cpu_platform.py imports.
  const cpu = withOverrides(overrides, {
    ...cpuSftOverrides(),
    'trainer.total_training_steps': '1',
    'trainer.default_local_dir': join(dir, 'checkpoints'),
  });
  const env = {
    ...cpuEnv({ kvCacheGib: 1 }, []),
    VERL_FILE_LOGGER_PATH: join(dir, 'metrics.jsonl'),
    TENSORBOARD_DIR: join(dir, 'tensorboard'),
    OMP_NUM_THREADS: '1',
  };
  const torchrun = join(ROOT, '.venv', 'verl', 'bin', 'torchrun');
  const r = await execa(
    torchrun,
    ['--standalone', '--nproc_per_node=1', join(ROOT, 'gpu', 'verl', 'tests', 'cpu_platform.py'), ...cpu],
    { cwd: exp, env, reject: false, all: true },
  );
  assert.is(r.exitCode, 0, r.all?.split('\n').slice(-30).join('\n'));
  const curve = sftCurve(await readFile(join(dir, 'metrics.jsonl'), 'utf8'), 1);
  assert.is(curve.length, 1);
  assert.equal([curve[0].step, curve[0].epoch], [1, 1]);
  assert.ok(curve[0].train_loss! > 0 && Number.isFinite(curve[0].val_loss), JSON.stringify(curve));
  console.log(`verl SFT step on CPU: ${JSON.stringify(curve[0])}`);
  // The export's trainer.logger has verl's TensorBoard tracker write the step into TENSORBOARD_DIR.
  const scalars = await readScalars(join(dir, 'tensorboard'));
  const trainTags = Object.keys(scalars).filter((t) => t.startsWith('train/'));
  assert.ok(trainTags.length > 0, Object.keys(scalars).join(', '));
  assert.ok(
    trainTags.every((t) => scalars[t].length === 1 && scalars[t][0][0] === 1),
    JSON.stringify(scalars),
  );
  const dest = join(dir, 'checkpoint');
  assert.equal(await collectVerlCheckpoint(join(dir, 'checkpoints'), dest, 'sft'), { step: 1 });
  for (const f of [
    'model/config.json',
    'model/model.safetensors',
    'tokenizer/tokenizer.json',
    'tokenizer/chat_template.jinja',
    'mlepipe-worker.json',
  ])
    assert.ok(existsSync(join(dest, f)), f);
  assert.not.ok(existsSync(join(dest, 'tokenizer', 'model.safetensors')));
  // The weights and tokenizer load as a model folder (what verl's grpo and the worker load).
  const load = await execa(
    PY,
    [
      '-c',
      'import sys; from transformers import AutoModelForCausalLM, AutoTokenizer; m = AutoModelForCausalLM.from_pretrained(sys.argv[1]); t = AutoTokenizer.from_pretrained(sys.argv[2]); print(m.config.model_type, "<think>" in t.chat_template)',
      join(dest, 'model'),
      join(dest, 'tokenizer'),
    ],
    { reject: false, all: true },
  );
  assert.is(load.stdout.trim().split('\n').pop(), 'qwen3 True', load.all);
});

test.run();
