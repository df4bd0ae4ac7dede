// The code reads as the data flow: a module imports only from layers below its own, in the order
// docs/architecture.md draws (its line is read here, so the page cannot drift from the rule), and no
// stage kind imports another (what kinds share lives in stages/shared/). Tests and benches may reach
// anywhere; JSON schemas are data every layer reads.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import { ROOT } from './helpers.js';

/** Each top folder's floor, from the layer line of docs/architecture.md (`cli/ → … → core/`, top first). */
export function ranksOf(markdown: string): Record<string, number> {
  const line = /^cli\/ → .*$/m.exec(markdown)?.[0];
  if (!line) throw new Error('docs/architecture.md has no layer line starting `cli/ →`');
  const floors = line.split('→').map((f) => f.split(',').map((d) => d.trim().replace(/\/$/, '')));
  return Object.fromEntries(floors.flatMap((dirs, i) => dirs.map((d) => [d, floors.length - 1 - i])));
}

const RANK = ranksOf(await readFile(join(ROOT, 'docs', 'architecture.md'), 'utf8'));

async function sources(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(join(ROOT, dir), { recursive: true, withFileTypes: true })) {
    if (e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') && !e.name.endsWith('.d.ts'))
      out.push(relative(ROOT, join(e.parentPath, e.name)));
  }
  return out;
}

/** Relative module specifiers of static imports, re-exports and dynamic imports. */
export function specifiers(text: string): string[] {
  return [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]);
}

const t = suite('layers');

t('specifiers sees static, re-exported and dynamic imports', () => {
  assert.equal(
    specifiers(
      `import a from './a.js';\nexport type { B } from '../b.js';\nconst c = await import('../../c.js');\nimport './d.js';`,
    ),
    ['./a.js', '../b.js', '../../c.js', './d.js'],
  );
});

t('the layer line of docs/architecture.md names every top folder once, core at the bottom', () => {
  assert.equal(RANK, {
    core: 0,
    sandbox: 1,
    tasks: 2,
    tools: 2,
    seeds: 3,
    agents: 4,
    gpu: 5,
    stages: 6,
    pipelines: 7,
    cli: 8,
  });
});

t('no module imports from its own layer in another folder, or from a layer above', async () => {
  const wrong: string[] = [];
  for (const top of Object.keys(RANK)) {
    for (const file of await sources(top)) {
      for (const spec of specifiers(await readFile(join(ROOT, file), 'utf8'))) {
        const target = normalize(join(dirname(file), spec));
        const to = target.split('/')[0];
        if (to === top || !(to in RANK)) continue;
        if (RANK[to] >= RANK[top]) wrong.push(`${file} imports ${target}`);
      }
    }
  }
  assert.equal(wrong, []);
});

t('no stage kind imports another kind: what kinds share lives in stages/shared/', async () => {
  const wrong: string[] = [];
  for (const file of await sources('stages')) {
    const kind = file.split('/').length > 2 ? file.split('/')[1] : undefined;
    if (!kind || kind === 'shared') continue;
    for (const spec of specifiers(await readFile(join(ROOT, file), 'utf8'))) {
      const parts = normalize(join(dirname(file), spec)).split('/');
      if (parts[0] === 'stages' && parts.length > 2 && parts[1] !== kind && parts[1] !== 'shared')
        wrong.push(`${file} imports ${parts.join('/')}`);
    }
  }
  assert.equal(wrong, []);
});

t.run();
