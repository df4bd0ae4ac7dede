// Reading a reply in MLAgentBench's format: Reflection, Research Plan and
// Status, Fact Check and Thought, then `Action:` with one action's name and
// `Action Input:` with its arguments as a JSON object. Models drift from the
// format (fences around the JSON, single quotes, trailing commas, unquoted
// newlines inside strings), so the parse forgives what it can and says what
// is wrong when it cannot.
export const SECTIONS = ['Reflection', 'Research Plan and Status', 'Fact Check', 'Thought'] as const;

export type ParsedMlab =
  { ok: true; action: string; args: Record<string, unknown>; formatOk: boolean } | { ok: false; reason: string };

/** Text between `Label:` and the next known label. */
function section(text: string, label: string): string | null {
  const labels = [...SECTIONS, 'Action Input', 'Action'].map((l) => l.replace(/[()]/g, '\\$&')).join('|');
  const re = new RegExp(
    `^[ \\t]*\\**${label}\\**[ \\t]*:([\\s\\S]*?)(?=^[ \\t]*\\**(?:${labels})\\**[ \\t]*:|(?![\\s\\S]))`,
    'mi',
  );
  const m = re.exec(text);
  return m ? m[1].trim() : null;
}

/** The first balanced {...} of a text, minding strings. */
function firstObject(text: string): string | null {
  const start = text.indexOf('{');
  if (start < 0) return null;
  let depth = 0;
  let quote: string | null = null;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return text.slice(start, i + 1);
  }
  return null;
}

/** Raw newlines and tabs inside strings (a common slip when a model writes a whole file) escaped. */
function escapeInStrings(s: string): string {
  let out = '';
  let inStr = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inStr && c === '\\') {
      out += c + (s[i + 1] ?? '');
      i++;
      continue;
    }
    if (c === '"') inStr = !inStr;
    out += inStr && c === '\n' ? '\\n' : inStr && c === '\t' ? '\\t' : inStr && c === '\r' ? '' : c;
  }
  return out;
}

export function parseJsonLenient(raw: string): Record<string, unknown> | string {
  const body = raw
    .replace(/^```(?:json)?\s*\n?/i, '')
    .replace(/\n?```\s*$/, '')
    .trim();
  const obj = firstObject(body);
  if (obj === null) return 'the Action Input is not a JSON object (write it as {"name": "value", ...})';
  const tries = [obj, escapeInStrings(obj), escapeInStrings(obj.replace(/,\s*([}\]])/g, '$1'))];
  // Single-quoted keys and values, only when there are no double quotes to confuse.
  if (!obj.includes('"')) tries.push(escapeInStrings(obj.replace(/'/g, '"').replace(/,\s*([}\]])/g, '$1')));
  let last = '';
  for (const t of tries) {
    try {
      const v = JSON.parse(t) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
      return 'the Action Input must be a JSON object';
    } catch (err) {
      last ||= (err as Error).message;
    }
  }
  return `the Action Input is not valid JSON (${last})`;
}

/** `names`: the actions on offer this rollout; an action is matched ignoring case and spacing. */
export function parseMlab(text: string, names: readonly string[]): ParsedMlab {
  const input = section(text, 'Action Input');
  const actionText = section(text, 'Action');
  if (actionText === null)
    return {
      ok: false,
      reason: 'the reply has no "Action:" line; end every reply with Action: <name> and Action Input: <JSON object>',
    };
  const name = actionText.split('\n')[0].replace(/[*`"]/g, '').trim();
  const key = (s: string) =>
    s
      .toLowerCase()
      .replace(/[\s_]+/g, ' ')
      .trim();
  const action = names.find((n) => key(n) === key(name));
  if (!action) return { ok: false, reason: `"${name}" is not an available action (available: ${names.join(', ')})` };
  if (input === null)
    return { ok: false, reason: `no "Action Input:" after Action: ${action}; give its arguments as a JSON object` };
  const args = input.trim() === '' || input.trim() === '{}' ? {} : parseJsonLenient(input);
  if (typeof args === 'string') return { ok: false, reason: args };
  const formatOk = SECTIONS.every((s) => section(text, s) !== null);
  return { ok: true, action, args, formatOk };
}
