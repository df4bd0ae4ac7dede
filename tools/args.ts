// A tool call's arguments: `k=v` pairs from the command line turned into typed
// values, and any argument object checked against the tool's schema, every
// problem named by its argument.
import { UserError, type Diagnostic } from '../core/errors.js';
import { suggestion } from '../core/suggest.js';
import type { ArgSchema, ToolSpec } from './types.js';

function coerce(name: string, text: string, s: ArgSchema): unknown {
  switch (s.type) {
    case 'string':
      return text;
    case 'number':
    case 'integer':
      // Left as text when it is not a number, so the error shows what was typed.
      return text.trim() === '' || Number.isNaN(Number(text)) ? text : Number(text);
    case 'boolean':
      return text === 'true' ? true : text === 'false' ? false : text;
    case 'array': {
      const parts = text
        .split(',')
        .map((p) => p.trim())
        .filter((p) => p !== '');
      return s.items?.type === 'integer' ? parts.map((p) => (Number.isNaN(Number(p)) ? p : Number(p))) : parts;
    }
    default:
      throw new UserError(`argument "${name}": unsupported type`);
  }
}

/** `["path=public/train.csv", "k=3"]` → `{ path: "public/train.csv", k: 3 }`, typed by the schema. */
export function parseArgPairs(spec: ToolSpec, pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const bad: Diagnostic[] = [];
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) {
      bad.push({ message: `--arg ${pair}: expected NAME=VALUE` });
      continue;
    }
    const name = pair.slice(0, eq);
    const s = spec.args.properties[name];
    // Unknown names are left for checkArgs, which reports them with a suggestion.
    out[name] = s ? coerce(name, pair.slice(eq + 1), s) : pair.slice(eq + 1);
  }
  if (bad.length) throw new UserError(bad);
  return checkArgs(spec, out);
}

function problem(v: unknown, s: ArgSchema): string | undefined {
  const isNum = typeof v === 'number' && Number.isFinite(v);
  switch (s.type) {
    case 'string':
      if (typeof v !== 'string') return 'must be a string';
      if (s.enum && !s.enum.includes(v)) return `must be one of: ${s.enum.join(', ')}${suggestion(v, s.enum)}`;
      return undefined;
    case 'number':
      return isNum ? undefined : `must be a number, not ${JSON.stringify(v)}`;
    case 'integer':
      if (!isNum || !Number.isInteger(v)) return `must be an integer, not ${JSON.stringify(v)}`;
      return s.minimum !== undefined && (v as number) < s.minimum ? `must be at least ${s.minimum}` : undefined;
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'must be true or false';
    case 'array': {
      if (!Array.isArray(v)) return 'must be a list (comma-separated on the command line)';
      const want = s.items?.type ?? 'string';
      const wrong: unknown = v.find((x) => (want === 'integer' ? !Number.isInteger(x) : typeof x !== 'string'));
      return wrong === undefined
        ? undefined
        : `every item must be ${want === 'integer' ? 'an integer' : 'a string'}, not ${JSON.stringify(wrong)}`;
    }
  }
}

/** The arguments with defaults filled in; a UserError naming each bad argument otherwise. */
export function checkArgs(spec: ToolSpec, args: Record<string, unknown>): Record<string, unknown> {
  const props = spec.args.properties;
  const known = Object.keys(props);
  const bad: Diagnostic[] = [];
  const at = (name: string) => `${spec.name}: argument "${name}"`;
  for (const [name, v] of Object.entries(args)) {
    if (!Object.hasOwn(props, name)) {
      bad.push({ message: `${at(name)}: unknown${suggestion(name, known)} (arguments: ${known.join(', ')})` });
      continue;
    }
    const p = problem(v, props[name]);
    if (p) bad.push({ message: `${at(name)}: ${p}` });
  }
  for (const name of spec.args.required)
    if (!(name in args)) bad.push({ message: `${at(name)}: missing (${props[name].description})` });
  if (bad.length) throw new UserError(bad);
  const out: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(props)) if (s.default !== undefined) out[name] = s.default;
  return { ...out, ...args };
}
