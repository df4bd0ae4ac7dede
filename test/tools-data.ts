// Data whose diagnoses are known by construction, for the diagnostic tools' tests.
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Rng } from '../core/random.js';

function normal(r: Rng): number {
  return Math.sqrt(-2 * Math.log(1 - r.next())) * Math.cos(2 * Math.PI * r.next());
}

const csv = (header: string[], rows: (string | number)[][]) =>
  [header.join(','), ...rows.map((r) => r.join(','))].join('\n') + '\n';

/** Tabular: 30% missing in `a`, scales 1 vs 1000, b~c correlated, lognormal `skewed`, 9:1 labels, a leaky feature, 5 outliers in `b`. */
function tabular(r: Rng) {
  const n = 400;
  const missing = new Set(r.shuffle([...Array(n).keys()]).slice(0, 120));
  const positives = new Set(r.shuffle([...Array(n).keys()]).slice(0, 40));
  const outliers = new Set([10, 20, 30, 40, 50]);
  const cats = Array.from({ length: 30 }, (_, i) => `c${i}`);
  const rows = [];
  for (let i = 0; i < n; i++) {
    const label = positives.has(i) ? 1 : 0;
    const b = outliers.has(i) ? 1e5 : 1000 + 100 * normal(r);
    rows.push([
      i,
      missing.has(i) ? '' : normal(r).toFixed(4),
      b.toFixed(3),
      (2 * b + normal(r)).toFixed(3),
      Math.exp(normal(r)).toFixed(4),
      r.pick(cats),
      r.pick(['red', 'green', 'blue']),
      (label + 0.01 * normal(r)).toFixed(5),
      label,
    ]);
  }
  return { header: ['id', 'a', 'b', 'c', 'skewed', 'cat', 'color', 'leak', 'label'], rows };
}

/** Time series columns with known properties. */
function series(r: Rng) {
  const n = 300;
  const cols: Record<string, number[]> = {
    weekly: [],
    walk: [],
    noise: [],
    ar2: [],
    trend: [],
    shift: [],
    spike: [],
    cause: [],
    effect: [],
    loss: [],
  };
  let walk = 0;
  for (let t = 0; t < n; t++) {
    walk += normal(r);
    cols.weekly.push(Math.sin((2 * Math.PI * t) / 7) + 0.3 * normal(r));
    cols.walk.push(walk);
    cols.noise.push(normal(r));
    const ar = t >= 2 ? 0.5 * cols.ar2[t - 1] + 0.3 * cols.ar2[t - 2] : 0;
    cols.ar2.push(ar + normal(r));
    cols.trend.push(0.05 * t + normal(r));
    cols.shift.push((t >= 200 ? 3 : 0) + 0.5 * normal(r));
    cols.spike.push((t === 150 ? 20 : 0) + 0.5 * normal(r));
    cols.cause.push(normal(r));
    cols.effect.push((t ? 0.8 * cols.cause[t - 1] : 0) + 0.3 * normal(r));
    cols.loss.push(2 * Math.exp(-t / 20) + 0.1 + 0.0005 * normal(r));
  }
  const names = Object.keys(cols);
  return csv(
    ['t', ...names],
    Array.from({ length: n }, (_, t) => [t, ...names.map((k) => cols[k][t].toFixed(5))]),
  );
}

/** A training log: loss for 50 steps (NaN at step 40), val_acc every 10. */
function log(): string {
  const lines = ['starting run'];
  for (let s = 1; s <= 50; s++) {
    lines.push(`epoch ${Math.ceil(s / 10)} step ${s} loss=${s === 40 ? 'nan' : (1 / s).toFixed(4)} lr: 0.001`);
    if (s % 10 === 0) lines.push(`{"step": ${s}, "val_acc": ${(0.5 + s / 200).toFixed(3)}}`);
  }
  return lines.join('\n') + '\n';
}

export const SCRIPTS = {
  'train.py': [
    'import argparse, os',
    'lr = 0.1',
    'parser = argparse.ArgumentParser()',
    'parser.add_argument("--epochs", type=int, default=5)',
    'batch = int(os.environ.get("BATCH", "32"))',
    'lr = 0.01',
    'config = {"dropout": 0.2}',
    '',
  ].join('\n'),
  'model.py': [
    'import torch.nn as nn',
    'class Good(nn.Module):',
    '    def __init__(self):',
    '        super().__init__()',
    '        self.conv = nn.Conv2d(3, 8, 3, padding=1)',
    '        self.flat = nn.Flatten()',
    '        self.fc = nn.Linear(8 * 32 * 32, 10)',
    '    def forward(self, x):',
    '        return self.fc(self.flat(self.conv(x)))',
    'def Bad():',
    '    return nn.Sequential(nn.Conv2d(3, 8, 3), nn.Flatten(), nn.Linear(8 * 32 * 32, 10))',
    '',
  ].join('\n'),
  'config.json': JSON.stringify({
    learning_rate: 0.001,
    hidden_size: 64,
    num_attention_heads: 3,
    fp16: true,
    bf16: true,
    warmup_steps: 10,
    max_steps: 100,
  }),
  'alloc.py': 'import numpy as np\nx = np.ones(40_000_000)\nprint(x.sum())\n',
  'hog.py': 'import numpy as np\nx = np.ones(2_000_000_000)\n',
};

/** A task folder: the data under public/, an answer under private/ that no tool may read; `media` adds text, image and graph files. */
export async function toolTask(media = false): Promise<string> {
  const r = new Rng('tools-test');
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-tools-'));
  const t = tabular(r);
  const dupBase = t.rows.slice(0, 100).map((row) => row.slice(1));
  const test = [...t.rows.slice(100, 125), ...tabular(new Rng('other')).rows.slice(0, 75)].map((row, i) => [
    1000 + i,
    ...row.slice(1),
  ]);
  // Products of two uniform features decide the label; either alone says nothing.
  const inter = Array.from({ length: 600 }, () => {
    const [x1, x2, x3, x4] = [r.uniform(-1, 1), r.uniform(-1, 1), r.uniform(-1, 1), r.uniform(-1, 1)];
    return [x1.toFixed(4), x2.toFixed(4), x3.toFixed(4), x4.toFixed(4), x1 * x2 > 0 ? 1 : 0];
  });
  const files: Record<string, string> = {
    'public/train.csv': csv(t.header, t.rows),
    'public/test.csv': csv(t.header, test),
    'public/dups.csv': csv(t.header.slice(1), [...dupBase, ...dupBase.slice(0, 15)]),
    'public/inter.csv': csv(['x1', 'x2', 'x3', 'x4', 'y'], inter),
    'public/series.csv': series(new Rng('tools-series')),
    'public/train.log': log(),
    'public/sample_submission.csv': csv(
      ['id', 'label'],
      Array.from({ length: 10 }, (_, i) => [i, 0]),
    ),
    'public/submission.csv': csv(
      ['id', 'prediction'],
      Array.from({ length: 8 }, (_, i) => [i, 0]),
    ),
    'private/answer.csv': 'id,label\n0,SECRET\n',
    ...Object.fromEntries(Object.entries(SCRIPTS).map(([k, v]) => [`public/${k}`, v])),
  };
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  if (media) await (await import('./tools-media.js')).writeMedia(dir);
  return dir;
}

/** A warm bwrap session on the agent environment over a fresh tool task (or the task folder given, left in place), as scripted agents get one. */
export async function toolSession(media = false, given?: string) {
  const { createSandbox } = await import('../sandbox/index.js');
  const { envInstalled, pythonEnv } = await import('../core/python.js');
  const { runTool, TOOL_MODULES } = await import('../tools/index.js');
  const { rm } = await import('node:fs/promises');
  const agent = pythonEnv('agent');
  if (!envInstalled(agent)) throw new Error(`the agent environment is not installed: ${agent.fix}`);
  const task = given ?? (await toolTask(media));
  // Preloading what the tools import, as a scripted agent's jail does.
  const sandbox = createSandbox({
    backend: 'bwrap',
    warm: true,
    python: agent.python,
    poolSize: 0,
    modules: TOOL_MODULES,
  });
  const session = await sandbox.open({ task });
  return {
    task,
    session,
    /** One call; a failed call fails the test with the tool's own message. */
    async call(name: string, args: Record<string, unknown>) {
      const a = await runTool(session, name, args);
      if (!a.ok) throw new Error(`${name}: ${a.text}`);
      return a;
    },
    run: (name: string, args: Record<string, unknown>) => runTool(session, name, args),
    async close() {
      await session.close();
      await sandbox.shutdown();
      if (!given) await rm(task, { recursive: true, force: true });
    },
  };
}
