// Stage params and their schemas cannot drift apart: stages/params.gen.ts
// holds the schemas' own types (made by npm run typecheck), the generator
// translates each keyword the schemas use, and the agreement that
// stages/params-check.ts asks of every kind (npm run typecheck) fails for
// each kind of drift, checked here with the TypeScript compiler on a schema
// of the test's own.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { paramsModule, schemaType } from '../scripts/schema-types.mjs';
import { stageKinds } from '../stages/registry.js';
import { ROOT } from './helpers.js';

test('every stage kind of the registry has a generated type and a line in params-check', () => {
  const generated = paramsModule();
  const check = readFileSync(join(ROOT, 'stages', 'params-check.ts'), 'utf8');
  for (const kind of stageKinds()) {
    assert.match(generated, new RegExp(`^  ${kind}: \\{$`, 'm'), `${kind} has no generated type`);
    assert.match(check, new RegExp(`^  ${kind}: true,$`, 'm'), `${kind} is not checked`);
  }
});

test('a default makes a property present; required or not, the rest are optional; enums, unions, lists and maps translate', () => {
  const t = schemaType({
    type: 'object',
    additionalProperties: false,
    required: ['run'],
    properties: {
      run: { type: 'string' },
      deps: { type: 'array', items: { type: 'string' }, default: [] },
      timeout_s: { type: 'number' },
      mode: { enum: ['a', 'b'] },
      guidance: { anyOf: [{ type: 'boolean' }, { type: 'string' }] },
      env: { type: 'object', additionalProperties: { type: ['string', 'number'] }, default: {} },
      params: { type: 'object' },
      'odd-name': { type: 'integer' },
    },
  });
  assert.is(
    t,
    '{\n  run: string;\n  deps: string[];\n  timeout_s?: number;\n  mode?: "a" | "b";\n  guidance?: boolean | string;\n  env: Record<string, string | number>;\n  params?: Record<string, unknown>;\n  "odd-name"?: number;\n}',
  );
  assert.throws(
    () => schemaType({ type: 'object', properties: { x: { $ref: '#/definitions/x' } } }, 'shell'),
    /shell\.x: \$ref has no translation/,
  );
});

/** Type errors in one module made of stages/params-agree.ts, then `body`, compiled in memory; line numbers count from `body`. */
function typeErrors(body: string): string[] {
  const agree = readFileSync(join(ROOT, 'stages', 'params-agree.ts'), 'utf8').trimEnd();
  const offset = agree.split('\n').length;
  const file = '/virtual/check.ts';
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    types: [],
  };
  const host = ts.createCompilerHost(options);
  const { getSourceFile, fileExists } = host;
  host.getSourceFile = (name, lang, ...rest) =>
    name === file
      ? ts.createSourceFile(name, `${agree}\n${body}`, lang)
      : getSourceFile.call(host, name, lang, ...rest);
  host.fileExists = (name) => name === file || fileExists.call(host, name);
  const program = ts.createProgram([file], options, host);
  return ts
    .getPreEmitDiagnostics(program)
    .map(
      (d) =>
        `${d.file ? `${d.file.getLineAndCharacterOfPosition(d.start!).line + 1 - offset}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`,
    );
}

test('the agreement holds for a matching interface and fails, on its own line, for each kind of drift', () => {
  const schema = {
    type: 'object',
    additionalProperties: false,
    required: ['run'],
    properties: {
      run: { type: 'string' },
      deps: { type: 'array', items: { type: 'string' }, default: [] },
      timeout_s: { type: 'number' },
      mode: { enum: ['a', 'b'], default: 'a' },
    },
  };
  const cases: Array<[string, string]> = [
    ['agrees', "{ run: string; readonly deps: readonly string[]; timeout_s?: number; mode: 'a' | 'b' }"],
    ['a default left optional', "{ run: string; deps?: string[]; timeout_s?: number; mode: 'a' | 'b' }"],
    ['a property dropped', "{ run: string; deps: string[]; mode: 'a' | 'b' }"],
    ['a property added', "{ run: string; deps: string[]; timeout_s?: number; mode: 'a' | 'b'; extra: number }"],
    ['another type', "{ run: number; deps: string[]; timeout_s?: number; mode: 'a' | 'b' }"],
    ['an enum widened', '{ run: string; deps: string[]; timeout_s?: number; mode: string }'],
  ];
  // The schema's type on line 1; then each case on two lines, its interface and its check.
  const body = [
    `type S = ${schemaType(schema).replace(/\n\s*/g, ' ')};`,
    ...cases.map(([, p], i) => `interface P${i} ${p}\nexport const c${i}: Agrees<P${i}, S> = true;`),
  ].join('\n');
  const errors = typeErrors(body);
  const failing = cases.filter((_, i) => errors.some((e) => e.startsWith(`${3 + 2 * i}: `))).map(([name]) => name);
  assert.equal(
    failing,
    cases.slice(1).map(([name]) => name),
    errors.join('\n'),
  );
  assert.is(errors.length, cases.length - 1, errors.join('\n'));
});

test.run();
