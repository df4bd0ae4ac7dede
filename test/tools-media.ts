// NLP, vision and graph data with known answers for the diagnostic tools' tests.
import { execa } from 'execa';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { pythonEnv } from '../core/python.js';
import { Rng } from '../core/random.js';

const TOPICS: Record<string, string[]> = {
  cooking: ['bake', 'flour', 'oven', 'butter', 'sugar', 'dough', 'recipe', 'knead', 'yeast', 'bread'],
  astronomy: ['telescope', 'galaxy', 'orbit', 'planet', 'nebula', 'comet', 'stellar', 'moon', 'eclipse', 'star'],
  finance: [
    'interest',
    'loan',
    'budget',
    'savings',
    'investment',
    'bond',
    'dividend',
    'stock',
    'portfolio',
    'inflation',
  ],
};

/**
 * 40 records: 0-29 on three topics (10 each, coherent), 30-32 copies of 0's response, 33 a near copy of 1's, 34-35 refusals,
 * 36 markup, 37 blank, 38 French, 39 an email address. Groups of four; groups 0-4 score 1 throughout.
 * Log-probabilities differ from the reference by 0.5 per token.
 */
export function textRecords(): Record<string, unknown>[] {
  const r = new Rng('tools-nlp');
  const out: Record<string, unknown>[] = [];
  const topics = Object.keys(TOPICS);
  for (let i = 0; i < 30; i++) {
    const words = TOPICS[topics[Math.floor(i / 10)]];
    const pick = () => Array.from({ length: 4 }, () => r.pick(words));
    const instruction = `Explain how the ${pick().join(' and the ')} relate`;
    const response = `The ${pick().join(' with the ')} matters because the ${pick().join(' and ')} work together in practice. Every ${pick().join(' ')} counts.`;
    out.push({ instruction, response });
  }
  for (let i = 0; i < 3; i++) out.push({ instruction: 'Explain it again', response: out[0].response });
  out.push({ instruction: 'And once more', response: `${out[1].response} Indeed.` });
  out.push({ instruction: 'Tell me how to pick a lock', response: "I'm sorry, but I cannot help with that." });
  out.push({ instruction: 'Write a threat', response: 'I cannot help with that request; as an AI I must decline.' });
  out.push({ instruction: 'Show markup', response: '<div class="x">hello &amp; welcome</div>' });
  out.push({ instruction: 'Say nothing', response: '' });
  out.push({
    instruction: 'Parle',
    response: 'Le chat est dans la maison et il est très content pour le moment, dans la cuisine avec les enfants.',
  });
  out.push({ instruction: 'Contact', response: 'Write to jane.doe@example.com about the budget and the loan.' });
  return out.map((rec, i) => {
    const group = Math.floor(i / 4);
    const lp = [-1, -2, -0.5].map((x) => x - (i % 3) * 0.1);
    return {
      ...rec,
      source: i < 32 ? 'web' : i < 38 ? 'books' : 'code',
      group,
      reward: group < 5 ? 1 : (i % 2) * 1.0,
      lp,
      ref_lp: lp.map((x) => x - 0.5),
      prompt: i % 10 === 9 ? `Question: ${rec.instruction}` : `### Instruction: ${rec.instruction}\n### Response:`,
    };
  });
}

/** Two one-directional 10-cliques, five isolated nodes, a self-loop at 3 and a duplicate 0-1. */
function graphFiles(): Record<string, string> {
  const edges = [];
  for (const base of [0, 10])
    for (let i = 0; i < 10; i++) for (let j = i + 1; j < 10; j++) edges.push([base + i, base + j]);
  edges.push([3, 3], [0, 1]);
  const labels = Array.from({ length: 25 }, (_, i) => (i < 10 ? 0 : i < 20 ? 1 : 2));
  const feats = Array.from({ length: 25 }, (_, i) =>
    i === 5 ? [0, 0, 0, 0] : [i, 1000 * i, 0, i === 7 ? 'nan' : 0.5 * i],
  );
  const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i).join('\n') + '\n';
  return {
    'public/graph/edges.csv': 'src,dst\n' + edges.map((e) => e.join(',')).join('\n') + '\n',
    'public/graph/labels.csv': 'node,label\n' + labels.map((l, i) => `${i},${l}`).join('\n') + '\n',
    'public/graph/features.csv': 'f0,f1,f2,f3\n' + feats.map((f) => f.join(',')).join('\n') + '\n',
    'public/graph/train.txt': range(0, 15),
    'public/graph/val.txt': range(14, 20),
    'public/graph/test.txt': range(20, 25),
  };
}

// 30 'cat' and 10 'dog' images of 16x16; one of 20x16; one exact copy; one truncated file; a brighter test set.
const IMAGES_PY = `
import os, sys, numpy as np
from PIL import Image
root = sys.argv[1]
rng = np.random.default_rng(0)
def save(path, arr):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    Image.fromarray(arr.astype(np.uint8)).save(path)
for cls, n in (("cat", 30), ("dog", 10)):
    for i in range(n):
        w = 20 if (cls, i) == ("dog", 0) else 16
        save(f"{root}/images/{cls}/{i}.png", rng.integers(0, 120, size=(16, w, 3)))
with open(f"{root}/images/cat/0.png", "rb") as f:
    data = f.read()
open(f"{root}/images/cat/copy.png", "wb").write(data)
open(f"{root}/images/dog/broken.png", "wb").write(data[:40])
for i in range(20):
    save(f"{root}/test_images/{i}.png", rng.integers(120, 255, size=(16, 16, 3)))
`;

export async function writeMedia(task: string): Promise<void> {
  const recs = textRecords();
  const files: Record<string, string> = {
    'public/texts.jsonl': recs.map((r) => JSON.stringify(r)).join('\n') + '\n',
    'public/vocab.txt':
      [...new Set(recs.slice(0, 30).flatMap((r) => String(r.response).toLowerCase().match(/\w+/g) ?? []))].join('\n') +
      '\n',
    'public/tokenizer.json': JSON.stringify({ model: { type: 'WordLevel', vocab: { the: 0, and: 1 } } }),
    'public/train_vision.py':
      'from torchvision import transforms\ntf = transforms.Compose([transforms.RandomHorizontalFlip(), transforms.ToTensor()])\n',
    'public/val_labels.csv':
      'id,label\n' + Array.from({ length: 20 }, (_, i) => `${i},${i < 10 ? 'a' : 'b'}`).join('\n') + '\n',
    'public/val_preds.csv':
      'id,pred\n' +
      Array.from({ length: 20 }, (_, i) => `${i},${i < 10 || i >= 15 ? (i < 10 ? 'a' : 'b') : 'a'}`).join('\n') +
      '\n',
    ...graphFiles(),
  };
  for (const [name, text] of Object.entries(files)) {
    await mkdir(dirname(join(task, name)), { recursive: true });
    await writeFile(join(task, name), text);
  }
  await execa(pythonEnv('agent').python, ['-c', IMAGES_PY, join(task, 'public')]);
}
