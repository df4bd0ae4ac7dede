// vLLM's CPU build as a scorer: SPICE's prompt scorer (agents/shaping/prompt-scorer.ts: the chat rendered as
// ChatML text, the reply's tokens picked by their offsets in the echoed prompt) against vLLM's server, started as
// `serve: vllm` starts it (gpu/vllm/server.ts), gives the same log-probabilities as the trainer worker's /score
// on the same tiny model, token for token; and a server that cannot start fails with its own last words.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { LlmClient } from '../../agents/llm/client.js';
import { promptScorer } from '../../agents/shaping/prompt-scorer.js';
import type { ScoreItem } from '../../agents/shaping/types.js';
import { startLocalWorker, trainerPython } from '../../gpu/trainer/local.js';
import { localPython } from '../../gpu/verl/job.js';
import { startVllmServer } from '../../gpu/vllm/server.js';
import { workerScorer } from '../../stages/grpo/shaping/scorer.js';
import { ROOT } from '../helpers.js';
import { resolveModel } from '../../core/models.js';

/** Both servers compute in float32 on the CPU, with their own kernels: they agree to this much per token. */
const TOLERANCE = 1e-3;

const ITEMS: ScoreItem[] = [
  {
    messages: [
      { role: 'system', content: 'You solve machine-learning tasks.' },
      { role: 'user', content: 'Predict the target column of public/test.csv.' },
    ],
    prefix: '<think>Read the data first.</think>\n',
    reply: '```python\nimport pandas as pd\nprint(pd.read_csv("public/train.csv").head())\n```',
  },
  {
    messages: [
      { role: 'system', content: 'You solve machine-learning tasks.' },
      { role: 'user', content: 'Write submission.csv.' },
    ],
    prefix: '<think>Fit a linear model.</think>\n',
    reply: '<answer>submission.csv</answer>',
  },
];

test("the prompt scorer on vLLM's CPU build equals the worker's /score on the same tiny model", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'vllm-scorer-'));
  const model = join(dir, 'tiny');
  await execa(trainerPython(ROOT), ['-m', 'mlepipe_worker', 'tiny', model, '--preset', 'vllm', '--context', '4096'], {
    cwd: join(ROOT, 'gpu', 'worker'),
  });
  const lines: string[] = [];
  const [worker, server] = await Promise.all([
    startLocalWorker({ model: { dir: model }, ckptDir: join(dir, 'ckpt'), threads: 1, log: () => {} }),
    startVllmServer({ model, name: 'tiny', python: localPython(), log: (l) => lines.push(l) }),
  ]);
  try {
    const llm = new LlmClient({
      name: 'tiny',
      spec: resolveModel({ provider: 'openai', base_url: server.baseUrl, model: 'tiny', timeout_s: 60 }),
      maxRetries: 1,
      baseDelayMs: 1,
    });
    const [fromVllm, fromWorker] = await Promise.all([
      promptScorer(llm, { template: 'chatml', maxLength: 4096 }).score(ITEMS),
      workerScorer(worker.client, 4096).score(ITEMS),
    ]);
    for (const [i, v] of fromVllm.entries()) {
      const w = fromWorker[i];
      assert.ok(v && w, `item ${i}: vLLM ${JSON.stringify(v)}, worker ${JSON.stringify(w)}`);
      assert.is(v.length, w.length, `item ${i}: the same tokens`);
      const worst = Math.max(...v.map((x, j) => Math.abs(x - w[j])));
      assert.ok(worst < TOLERANCE, `item ${i}: largest difference ${worst}`);
    }
  } finally {
    await Promise.all([worker.stop(), server.stop()]);
  }
});

test('a vLLM server that exits before it answers fails the start with its last lines', async () => {
  let err: Error | undefined;
  await startVllmServer({
    model: join(tmpdir(), 'no-such-model'),
    name: 'x',
    python: localPython(),
    log: () => {},
  }).catch((e: Error) => (err = e));
  assert.ok(err);
  assert.match(err!.message, /vLLM's server for .*no-such-model exited before it was ready/);
});

test.run();
