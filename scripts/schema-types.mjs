// The TypeScript type of each stage's parameters as its JSON Schema
// describes them after validation: a property with a default is always
// there (ajv fills defaults in), one without is optional unless required.
// The generated module, stages/params.gen.ts, is what stages/params-check.ts
// compares each stage's hand-written *Params interface with, so that a
// schema and its interface cannot drift apart. It is made afresh by every
// `npm run typecheck` and never committed, so it cannot be older than the
// schemas.
//
//   node scripts/schema-types.mjs          prints the module
//   node scripts/schema-types.mjs --write  writes stages/params.gen.ts
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

/** The type of values `schema` accepts; `at` names the place, for the error on a keyword this does not translate. */
export function schemaType(schema, at = '') {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  for (const k of ['$ref', 'oneOf', 'allOf', 'not', 'if', 'patternProperties', 'prefixItems']) {
    if (k in schema)
      throw new Error(`${at || 'schema'}: ${k} has no translation to a type here (scripts/schema-types.mjs)`);
  }
  if ('const' in schema) return JSON.stringify(schema.const);
  if (schema.enum) return union(schema.enum.map((v) => JSON.stringify(v)));
  if (schema.anyOf) return union(schema.anyOf.map((s, i) => schemaType(s, `${at}.anyOf[${i}]`)));
  const types = schema.type === undefined ? [] : [schema.type].flat();
  if (!types.length) return 'unknown';
  return union(types.map((t) => typeOf(t, schema, at)));
}

function typeOf(t, schema, at) {
  if (t in PRIMITIVE) return PRIMITIVE[t];
  if (t === 'array') {
    if (Array.isArray(schema.items)) throw new Error(`${at}: tuple items have no translation here`);
    const item = schemaType(schema.items, `${at}[]`);
    return /[ |&]/.test(item) && !/^[{(]/.test(item) ? `Array<${item}>` : `${item}[]`;
  }
  if (t === 'object') return objectType(schema, at);
  throw new Error(`${at}: type ${t} is unknown`);
}

function objectType(schema, at) {
  const props = Object.entries(schema.properties ?? {});
  const required = new Set(schema.required ?? []);
  const extra = schema.additionalProperties;
  const rest = extra === false ? undefined : schemaType(extra === undefined ? true : extra, `${at}.*`);
  if (!props.length) return `Record<string, ${rest ?? 'never'}>`;
  const lines = props.map(([name, sub]) => {
    const optional = !required.has(name) && !('default' in sub);
    return `${KEY.test(name) ? name : JSON.stringify(name)}${optional ? '?' : ''}: ${indent(schemaType(sub, `${at}.${name}`), '  ')};`;
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

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write')) writeFileSync(GENERATED, paramsModule());
  else process.stdout.write(paramsModule());
}
