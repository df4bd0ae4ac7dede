// Worker model entries: which weights they name, and a tiny one served for a node and stopped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import OpenAI from 'openai';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveModel, type ModelSpec, type WrittenModel } from '../../core/models.js';
import type { InputNode, StageContext } from '../contract.js';
import { serveModel } from './worker.js';
import { weightsFor } from './weights.js';

const worker = (over: Partial<WrittenModel>): ModelSpec => resolveModel({ provider: 'worker', model: 'm', ...over });
const input = (name: string, dir: string) => ({ name, id: name, key: 'k', dir, metrics: {}, variant: {} }) as InputNode;

test('a worker entry names one set of weights, and they must be there', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-weights-'));
  try {
    const ctx = {
      experimentDir: dir,
      inputs: [input('sft', join(dir, 'sft-out')), input('gen', join(dir, 'gen-out'))],
    };
    await mkdir(join(dir, 'sft-out', 'checkpoint'), { recursive: true });
    await mkdir(join(dir, 'gen-out'));
    await mkdir(join(dir, 'weights'));
    assert.equal(weightsFor(ctx, 'p', worker({ tiny: 3 })), { tiny: true, seed: 3 });
    assert.equal(weightsFor(ctx, 'p', worker({ path: 'weights' })), { dir: join(dir, 'weights') });
    assert.equal(weightsFor(ctx, 'p', worker({ checkpoint: 'sft' })), { dir: join(dir, 'sft-out', 'checkpoint') });
    assert.throws(() => weightsFor(ctx, 'p', worker({})), /model p: .*exactly one of path/);
    assert.throws(() => weightsFor(ctx, 'p', worker({ tiny: 1, path: 'weights' })), /names 2/);
    assert.throws(() => weightsFor(ctx, 'p', worker({ path: 'nope' })), /path nope: no such folder/);
    assert.throws(
      () => weightsFor(ctx, 'p', worker({ checkpoint: 'other' })),
      /must be a stage in this stage's needs:/,
    );
    assert.throws(() => weightsFor(ctx, 'p', worker({ checkpoint: 'gen' })), /wrote no checkpoint\//);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('a tiny worker model is served for the node through the openai client, and stopped', async () => {
  const out = await mkdtemp(join(tmpdir(), 'mlepipe-served-'));
  const lines: string[] = [];
  try {
    const ctx = {
      experimentDir: out,
      inputs: [],
      outDir: out,
      models: { pol: worker({ tiny: 0 }) },
      log: (l: string) => lines.push(l),
      signal: new AbortController().signal,
    } as unknown as StageContext<unknown>;
    const served = await serveModel(ctx, 'pol');
    try {
      assert.is(served.spec.provider, 'openai');
      const client = new OpenAI({ baseURL: served.spec.base_url, apiKey: 'none' });
      const r = await client.chat.completions.create({
        model: served.spec.model,
        messages: [{ role: 'user', content: 'the agent reads the csv' }],
        max_tokens: 4,
        temperature: 1,
        seed: 1,
      });
      assert.ok(r.choices[0].message.content !== undefined);
      assert.is((await served.trainer!.health()).step, 0);
    } finally {
      await served.stop();
    }
    assert.ok(
      lines.some((l) => l.startsWith('worker: mlepipe-worker listening on')),
      lines.join('\n'),
    );
    // An openai entry is used as it is; nothing is started.
    const plain = await serveModel(
      {
        ...ctx,
        models: { api: { provider: 'openai', model: 'x', base_url: 'http://127.0.0.1:1/v1' } },
      } as unknown as StageContext<unknown>,
      'api',
    );
    assert.is(plain.spec.base_url, 'http://127.0.0.1:1/v1');
    assert.is(plain.worker, undefined);
  } finally {
    await rm(out, { recursive: true, force: true });
  }
});

test.run();
