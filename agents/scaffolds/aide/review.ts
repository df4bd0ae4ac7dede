// The review AIDE asks for after every execution, from the same endpoint: a function call whose arguments say
// whether the run failed, what it found and the validation metric it printed (and, under aideml's rules, whether
// lower is better). A node is buggy when the review says so, when the run crashed or timed out, or when the review
// gives no metric; a review that cannot be read counts as a bug report (aira-dojo's fallback).
import { renderPrompt } from '../../factory/answers.js';
import type { ToolSpec } from '../../policies/types.js';
import { ask } from '../turns.js';
import type { EpisodeContext, EpisodeResult } from '../types.js';

export interface Review {
  is_bug: boolean;
  summary: string;
  metric: number | null;
  lower_is_better?: boolean;
  /** The answer could not be read as the function's arguments. */
  unreadable?: true;
}

/** The function the reviewer calls: with the direction (aideml, MLE-Dojo) or without it (aira-dojo). */
export function reviewTool(withDirection: boolean): ToolSpec {
  const properties: Record<string, unknown> = {
    is_bug: { type: 'boolean', description: 'true when the log shows the run failed or the code has a bug.' },
    summary: {
      type: 'string',
      description: 'For a bug, how to fix it; otherwise two or three sentences on what the run found.',
    },
    metric: {
      type: 'number',
      description: 'The validation metric the run printed, when it ran correctly; null otherwise.',
    },
  };
  if (withDirection)
    properties.lower_is_better = {
      type: 'boolean',
      description: 'true when smaller values of the metric are better (an error such as RMSE), false otherwise.',
    };
  return {
    name: 'submit_review',
    description: "Report on the training script's run.",
    parameters: { type: 'object', properties, required: Object.keys(properties) },
  };
}

/** The first JSON object in the text (the whole text, else the first balanced {...} that parses). */
export function firstJsonObject(text: string): Record<string, unknown> | null {
  const whole = tryObject(text.trim());
  if (whole) return whole;
  for (let start = text.indexOf('{'); start >= 0; start = text.indexOf('{', start + 1)) {
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        if (c === '\\') i++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) {
        const obj = tryObject(text.slice(start, i + 1));
        if (obj) return obj;
        break;
      }
    }
  }
  return null;
}

function tryObject(s: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** The review in an answer: a metric that is not a finite number is none; a missing is_bug follows the metric. */
export function parseReview(text: string): Review {
  const o = firstJsonObject(text);
  if (!o) return { is_bug: true, summary: '', metric: null, unreadable: true };
  const metric = typeof o.metric === 'number' && Number.isFinite(o.metric) ? o.metric : null;
  return {
    is_bug: typeof o.is_bug === 'boolean' ? o.is_bug : metric === null,
    summary: typeof o.summary === 'string' ? o.summary : '',
    metric,
    ...(typeof o.lower_is_better === 'boolean' ? { lower_is_better: o.lower_is_better } : {}),
  };
}

/** Asks the policy to review one execution. */
export async function askReview(
  ctx: EpisodeContext,
  node: { id: number; code: string; observation: string; exit_code: number | null; timed_out: boolean },
  usage: EpisodeResult['usage'],
): Promise<Review | { stop: EpisodeResult['ended']; error: string }> {
  const withDirection = ctx.aide.reviewDirection ?? true;
  const prompt = renderPrompt('aide/review', {
    description: ctx.task.description.trim(),
    code: node.code,
    output: node.observation,
  });
  const reply = await ask(
    ctx,
    {
      scaffold: 'aide',
      purpose: 'review',
      messages: [{ role: 'system', content: prompt }],
      turn: node.id,
      sample: ctx.sample,
      history: [],
      tool: reviewTool(withDirection),
      executed: { code: node.code, output: node.observation, exit_code: node.exit_code, timed_out: node.timed_out },
    },
    usage,
  );
  return 'stop' in reply ? reply : parseReview(reply.text);
}

/**
 * What a review makes of a node: buggy when the review says so, when the run crashed or timed out, when the
 * review gives no metric, or when the submission failed the format check; a buggy node has no metric. The
 * direction is the review's where the rules take it from the review, else the node keeps the task's.
 */
export function verdict(
  review: Review,
  run: { exit_code: number | null; timed_out: boolean; lower_is_better: boolean },
  o: { valid: boolean; reviewDirection: boolean },
): { buggy: boolean; metric: number | null; analysis: string; lower_is_better: boolean } {
  const crashed = run.timed_out || run.exit_code !== 0;
  const buggy = review.is_bug || crashed || review.metric === null || !o.valid;
  return {
    buggy,
    metric: buggy ? null : review.metric,
    analysis: review.summary,
    lower_is_better:
      o.reviewDirection && review.lower_is_better !== undefined ? review.lower_is_better : run.lower_is_better,
  };
}
