// `uses: guide`: task-specific guidance for collecting demonstrations
// (MLToolBench §2.2, App. D.1): for each task of its inputs, a model (any
// models: entry) or, without one, the procedural writer turns the task's spec,
// starter, fault record and fix into Table 9's structure (context, what to
// inspect, how to act on each outcome), checked against schemas/guidance and
// the tool registry. It lives in this node's guidance/<task>.json, on the
// evaluator's side; an eval stage with `guidance:` shows it to the teacher only.
import schema from '../../schemas/stages/guide.schema.json';
import { modelIdentity } from '../../core/models.js';
import { assetsDigest } from '../../core/assets.js';
import type { Stage } from '../contract.js';
import { lazyRun } from '../lazy.js';

export interface GuideParams {
  model?: string;
  attempts: number;
  limit?: number;
  concurrency: number;
}

export const guide: Stage<GuideParams> = {
  kind: 'guide',
  version: 1,
  description:
    'Task-specific guidance (context, what to inspect, how to act on each outcome) for guided demonstration collection.',
  schema,
  keyIgnore: ['concurrency'],
  flow: { gives: ['guidance'], takes: () => ['tasks'] },

  async keyExtras(p, ctx) {
    // The writer's code decides procedural guidance; the prompt and the model decide a model's.
    return {
      model: p.model && ctx.models[p.model] ? modelIdentity(ctx.models[p.model]) : null,
      writer: await assetsDigest(['agents/prompts/guide']),
    };
  },

  run: lazyRun(() => import('./run.js')),
};
