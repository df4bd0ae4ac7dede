// Reading what a model answered: the JSON object or the fenced block a role
// asked for, and the prompt templates the roles send.
import { assetText } from '../../core/assets.js';
import { InternalError } from '../../core/errors.js';

/** The first JSON object in an answer: a ```json block, else the outermost braces. */
export function extractJson(text: string): { ok: true; value: unknown } | { ok: false; error: string } {
  const fenced = /```(?:json)?\s*\n([\s\S]*?)```/.exec(text);
  const candidate = fenced ? fenced[1] : text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1);
  if (!candidate.trim()) return { ok: false, error: 'the answer holds no JSON object' };
  try {
    return { ok: true, value: JSON.parse(candidate) };
  } catch (err) {
    return { ok: false, error: `the JSON does not parse: ${(err as Error).message}` };
  }
}

/** The single fenced block of a language (python), or null. */
export function extractBlock(text: string, lang: string): string | null {
  const blocks = [...text.matchAll(new RegExp('```' + lang + '\\s*\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]);
  return blocks.length === 1 ? blocks[0] : null;
}

/** A prompt template from agents/prompts/ with {{name}} filled in. */
export function renderPrompt(name: string, values: Record<string, string | number>): string {
  return assetText(`agents/prompts/${name}.md`).replace(/\{\{(\w+)\}\}/g, (_, k: string) => {
    if (!(k in values)) throw new InternalError(`prompt ${name} needs {{${k}}}`);
    return String(values[k]);
  });
}
