// TypeScript types from the JSON Schemas, so that a schema and the
// hand-written type of what it checks cannot drift apart:
// - stages/params.gen.ts: each stage's parameters as its schema describes
//   them after validation: a property with a default is always there (ajv
//   fills defaults in), one without is optional unless required.
//   stages/params-check.ts compares each stage's *Params interface with it.
// - pipelines/config/schema.gen.ts: the experiment file and the settings
//   file as written, before any default: a property is optional unless
//   required. pipelines/config/written-check.ts compares the written types
//   of pipelines/config/types.ts with it.
// Both are made afresh by every `npm run typecheck` and never committed, so
// they cannot be older than the schemas.
//
//   node scripts/schema-types.mjs          prints the modules
//   node scripts/schema-types.mjs --write  writes them
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PRIMITIVE = { string: 'string', number: 'number', integer: 'number', boolean: 'boolean', null: 'null' };
const KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const union = (parts) => {
  const seen = [...new Set(parts)];
  return seen.length === 1 ? seen[0] : seen.map((p) => (/[&|]/.test(p) && !/^[{(]/.test(p) ? `(${p})` : p)).join(' | ');
};
const indent = (text, pad) => text.replace(/\n/g, `\n${pad}`);

/**
 * The type of values `schema` accepts; `at` names the place, for the error on a keyword this does not translate.
 * `written`: the value as a file holds it, before defaults are filled in (a default no longer makes a property
 * present).
 */
export function schemaType(schema, at = '', { written = false } = {}) {
  const opts = { written };
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  for (const k of ['$ref', 'allOf', 'not', 'if', 'patternProperties', 'prefixItems']) {
    if (k in schema)
      throw new Error(`${at || 'schema'}: ${k} has no translation to a type here (scripts/schema-types.mjs)`);
  }
  if ('const' in schema) return JSON.stringify(schema.const);
  if (schema.enum) return union(schema.enum.map((v) => JSON.stringify(v)));
  // As a type, one of the alternatives (oneOf) is any of them: what tells them apart is left to the schema.
  for (const k of ['anyOf', 'oneOf'])
    if (schema[k]) return union(schema[k].map((s, i) => schemaType(s, `${at}.${k}[${i}]`, opts)));
  const types = schema.type === undefined ? [] : [schema.type].flat();
  if (!types.length) return 'unknown';
  return union(types.map((t) => typeOf(t, schema, at, opts)));
}

function typeOf(t, schema, at, opts) {
  if (t in PRIMITIVE) return PRIMITIVE[t];
  if (t === 'array') {
    if (Array.isArray(schema.items)) throw new Error(`${at}: tuple items have no translation here`);
    const item = schemaType(schema.items, `${at}[]`, opts);
    return /[ |&]/.test(item) && !/^[{(]/.test(item) ? `Array<${item}>` : `${item}[]`;
  }
  if (t === 'object') return objectType(schema, at, opts);
  throw new Error(`${at}: type ${t} is unknown`);
}

function objectType(schema, at, opts) {
  const props = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const extra = schema.additionalProperties;
  const rest = extra === false ? undefined : schemaType(extra === undefined ? true : extra, `${at}.*`, opts);
  if (!props.length) return `Record<string, ${rest ?? 'never'}>`;
  const lines = props.map(([name, sub]) => {
    const optional = !required.has(name) && (opts.written || !('default' in sub));
    return `${KEY.test(name) ? name : JSON.stringify(name)}${optional ? '?' : ''}: ${indent(schemaType(sub, `${at}.${name}`, opts), '  ')};`;
  });
  const body = `{\n  ${lines.join('\n  ')}\n}`;
  return rest === undefined ? body : `${body} & Record<string, ${rest}>`;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The generated module's text: one type a stage kind, from schemas/stages/KIND.schema.json. */
export function paramsModule() {
  const kinds = readdirSync(join(root, 'schemas', 'stages'))
    .filter((f) => f.endsWith('.schema.json'))
    .map((f) => f.slice(0, -'.schema.json'.length))
    .sort();
  const types = kinds.map((kind) => {
    const schema = JSON.parse(readFileSync(join(root, 'schemas', 'stages', `${kind}.schema.json`), 'utf8'));
    return `  ${KEY.test(kind) ? kind : JSON.stringify(kind)}: ${indent(schemaType(schema, kind), '  ')};`;
  });
  return [
    '// Made by scripts/schema-types.mjs from schemas/stages/*.schema.json (npm run typecheck); not committed.',
    '',
    "/** Each stage kind's `with:` as its schema describes it once validated (defaults filled in). */",
    'export interface SchemaParams {',
    ...types,
    '}',
    '',
  ].join('\n');
}

export const GENERATED = join(root, 'stages', 'params.gen.ts');

/** The generated module's text: the experiment file and the settings file as written, from their schemas. */
export function configModule() {
  const typeOfFile = (name) => {
    const schema = JSON.parse(readFileSync(join(root, 'schemas', `${name}.schema.json`), 'utf8'));
    return schemaType(schema, name, { written: true });
  };
  return [
    '// Made by scripts/schema-types.mjs from schemas/experiment.schema.json and schemas/settings.schema.json',
    '// (npm run typecheck); not committed.',
    '',
    '/** An experiment file as its schema accepts it, before defaults. */',
    `export type SchemaExperiment = ${typeOfFile('experiment')};`,
    '',
    '/** A settings file (mlepipe.config.*) as its schema accepts it, before defaults. */',
    `export type SchemaSettings = ${typeOfFile('settings')};`,
    '',
  ].join('\n');
}

export const CONFIG_GENERATED = join(root, 'pipelines', 'config', 'schema.gen.ts');

/** Every generated module: where it goes and its text. */
export const generatedModules = () => [
  { file: GENERATED, text: paramsModule() },
  { file: CONFIG_GENERATED, text: configModule() },
];

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const { file, text } of generatedModules()) {
    if (process.argv.includes('--write')) writeFileSync(file, text);
    else process.stdout.write(text);
  }
}
