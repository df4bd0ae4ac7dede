// The response cache: a finished call's answer kept under a hash of what determines it, so that a rerun replays
// it without a request. One JSON file per call in the cache's llm/ folder.
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { writeFileAtomic } from '../../core/fs.js';
import type { Check } from '../../core/json-files.js';
import { parseJson } from '../../core/text.js';
import { canonicalJson, sha256 } from '../../core/hash.js';
import type { ModelSpec } from '../../core/models.js';
import type { ChatRequest, ChatResult } from './chat.js';

/** The cache key: model, messages, sampling parameters and sample index (not where the model is served). */
export function cacheKey(spec: ModelSpec, req: ChatRequest): string {
  return sha256(
    canonicalJson({
      model: spec.model,
      messages: req.messages,
      temperature: req.temperature ?? spec.temperature ?? null,
      max_tokens: req.max_tokens ?? spec.max_tokens ?? null,
      stop: req.stop ?? null,
      seed: req.seed ?? null,
      // Only when asked for, so that earlier cached answers keep their keys.
      ...(req.logprobs ? { logprobs: true } : {}),
      ...(req.tool ? { tool: req.tool } : {}),
      ...(req.attempt ? { attempt: req.attempt } : {}),
      sample: req.sample ?? 0,
    }),
  );
}

type Kept = Pick<ChatResult, 'content' | 'tool_arguments' | 'usage' | 'logprobs' | 'tokens'>;

/** A kept answer has its text and token counts. */
const keptProblem: Check = (v) => {
  const k = v as Partial<Kept> | null;
  return typeof k === 'object' && k !== null && typeof k.content === 'string' && typeof k.usage === 'object'
    ? undefined
    : 'not a kept answer (content and usage)';
};

/** The kept answer to a request, or undefined when there is none to replay; a damaged one is named. */
export async function readCached(dir: string, key: string): Promise<ChatResult | undefined> {
  const file = join(dir, `${key}.json`);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseJson(text, file);
  const problem = keptProblem(parsed);
  if (problem) throw new UserError(`${file}: ${problem}`);
  const hit = parsed as Kept;
  return {
    content: hit.content,
    usage: hit.usage,
    cached: true,
    logprobs: hit.logprobs,
    ...(hit.tokens ? { tokens: hit.tokens } : {}),
    ...(typeof hit.tool_arguments === 'string' ? { tool_arguments: hit.tool_arguments } : {}),
  };
}

export async function writeCached(
  dir: string,
  key: string,
  model: string,
  req: ChatRequest,
  result: ChatResult,
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFileAtomic(
    join(dir, `${key}.json`),
    JSON.stringify({
      model,
      request: req,
      content: result.content,
      ...(result.tool_arguments !== undefined ? { tool_arguments: result.tool_arguments } : {}),
      usage: result.usage,
      logprobs: result.logprobs,
      tokens: result.tokens,
    }) + '\n',
  );
}
