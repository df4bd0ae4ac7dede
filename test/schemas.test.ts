// The validators the build compiles ahead of time must judge input exactly as
// ajv compiling the same schemas at run time does (the sources use the latter,
// the built CLI the former), errors and filled-in defaults alike.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Ajv, type ValidateFunction } from 'ajv';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { addKeywords, AJV_OPTIONS } from '../core/schema-setup.mjs';
import { compileSchemas, schemaDigest } from '../scripts/compile-schemas.mjs';
import { ROOT } from './helpers.js';

async function schemaFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...(await schemaFiles(join(dir, e.name))));
    else if (e.name.endsWith('.schema.json')) out.push(join(dir, e.name));
  }
  return out;
}

// Inside the package, so that the generated imports of ajv's runtime helpers resolve.
const dir = await mkdtemp(join(ROOT, '.schemas-test-'));
type Compiled = Record<string, { digest: string; validate: ValidateFunction }>;
let PRECOMPILED: Compiled;
try {
  await writeFile(join(dir, 'validators.mjs'), compileSchemas(ROOT));
  ({ PRECOMPILED } = (await import(pathToFileURL(join(dir, 'validators.mjs')).href)) as { PRECOMPILED: Compiled });
} finally {
  await rm(dir, { recursive: true, force: true });
}
const schemas = new Map<string, Record<string, unknown>>();
for (const f of await schemaFiles(join(ROOT, 'schemas'))) {
  const s = JSON.parse(await readFile(f, 'utf8'));
  schemas.set(s.$id, s);
}
const ajv = addKeywords(new Ajv({ ...AJV_OPTIONS }));

/** Both validators on copies of `data`: their verdicts, errors and the data after defaults. */
function both(id: string, data: unknown) {
  const run = (fn: ValidateFunction) => {
    const copy = structuredClone(data);
    const ok = fn(copy);
    // The schema objects are the same in content, not identity.
    const errors = JSON.parse(JSON.stringify(fn.errors ?? []));
    return { ok, errors, copy };
  };
  return { built: run(PRECOMPILED[id].validate), runtime: run(ajv.getSchema(id) ?? ajv.compile(schemas.get(id)!)) };
}

test('every shipped schema is compiled ahead of time, with the digest of its text', () => {
  assert.equal(Object.keys(PRECOMPILED).sort(), [...schemas.keys()].sort());
  for (const [id, schema] of schemas) assert.is(PRECOMPILED[id].digest, schemaDigest(schema), id);
  // A variant under the same $id has another digest, so it is compiled at run time instead.
  const shell = schemas.get('mlepipe/stages/shell')!;
  assert.is.not(schemaDigest({ ...shell, required: [] }), PRECOMPILED['mlepipe/stages/shell'].digest);
});

const CASES: Array<[string, unknown]> = [
  ['mlepipe/experiment', { name: 'e', stages: { a: { uses: 'shell', with: { run: 'x' } } } }],
  [
    'mlepipe/experiment',
    {
      name: 'bad name!',
      stagez: {},
      stages: { '9x': { uses: 3, needs: ['a', 'a'], bogus: 1 } },
      tables: { t: { from: 'a', interval: 'cii' } },
    },
  ],
  [
    'mlepipe/experiment',
    {
      name: 'e',
      stages: { a: { uses: 'shell', matrix: {} } },
      figures: { f: { from: 'a', x: 'x', kind: 'pie' } },
      models: { m: { provider: 'x' } },
    },
  ],
  ['mlepipe/settings', { cache: 3, sandbox: { backend: 'bwarp' }, unknown: true }],
  ['mlepipe/stages/shell', { run: 'echo', deps: 'x', timeout_s: -1 }],
  ['mlepipe/stages/shell', { run: 'echo' }],
  ['mlepipe/stages/eval', { policy: 'scripted:forest', scaffold: 'reactt', repeats: 0 }],
  ['mlepipe/stages/eval', { policy: 'scripted:forest' }],
  ['mlepipe/stages/grpo', { policy: 'template', trainer: 'nope', clip: { low: 'a' } }],
  ['mlepipe/stages/generate', { backend: 'llm', count: 'many' }],
  ['mlepipe/stages/filter', { val: 2 }],
  ['mlepipe/trainer/batch', { format: 1, step: 'x', extra: [] }],
  ['mlepipe/seed-dna', { id: 'x' }],
];

test('compiled ahead of time or at run time: the same verdict, errors and defaults', () => {
  let failures = 0;
  for (const [id, data] of CASES) {
    const { built, runtime } = both(id, data);
    assert.equal(built, runtime, `${id}: ${JSON.stringify(data)}`);
    if (!built.ok) failures++;
  }
  // The cases do reach the errors (and the valid ones the defaults).
  assert.ok(failures >= 8, `${failures} of the cases failed validation`);
  assert.is.not(
    JSON.stringify(both('mlepipe/stages/shell', { run: 'echo' }).built.copy),
    JSON.stringify({ run: 'echo' }),
  );
});

test.run();
