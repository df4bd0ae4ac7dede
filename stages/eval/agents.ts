// Who acts in an eval node: its policies (a `provider: worker` model served for the node while it runs), the
// scaffold they act through, and for mlab the intervention on tool answers and the AI actions' model.
import { join } from 'node:path';
import { makePolicy, type Policy, type PolicyOptions, type PolicyRef } from '../../agents/policies/index.js';
import { aide } from '../../agents/scaffolds/aide/index.js';
import type { Intervention } from '../../agents/scaffolds/mlab/intervene.js';
import { mlabScaffold } from '../../agents/scaffolds/mlab/index.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { Scaffold } from '../../agents/scaffolds/types.js';
import type { ModelSpec } from '../../core/models.js';
import type { StageContext } from '../contract.js';
import { serveForSampling, type ServedModel } from '../shared/worker.js';
import type { EvalParams } from './index.js';
import { interventionOf } from './intervention.js';

type MakeScaffold = (p: EvalParams, iv?: Intervention, actionModel?: Policy) => Scaffold;

export const SCAFFOLDS = {
  react: () => react,
  aide: () => aide,
  mlab: (p, iv?, actionModel?) =>
    mlabScaffold({
      tools: p.tools ?? 'domain',
      toolDropout: p.tool_dropout ?? 0,
      seed: p.seed,
      ...(iv ? { intervention: iv } : {}),
      ...(actionModel ? { actionModel } : {}),
    }),
} satisfies Record<EvalParams['scaffold'], MakeScaffold>;

export interface EvalAgents {
  policies: Policy[];
  scaffold: Scaffold;
  intervention?: Intervention;
  /** Models served for this node; each is stopped when the node's runs are over. */
  served: ServedModel[];
}

type Named = { name: string; ref: PolicyRef };

const onWorker = (ref: PolicyRef, models: Readonly<Record<string, ModelSpec>>) =>
  ref.kind === 'openai' && models[ref.model].provider === 'worker';

/** Serves each `provider: worker` model a policy names, once; the models as the policies then reach them. */
async function serveWorkers(ctx: StageContext<EvalParams>, names: readonly Named[]) {
  const served: ServedModel[] = [];
  const models = { ...ctx.models };
  try {
    for (const { ref } of names) {
      if (ref.kind !== 'openai' || !onWorker(ref, ctx.models) || models[ref.model] !== ctx.models[ref.model]) continue;
      const s = await serveForSampling(ctx, ref.model);
      served.push(s);
      models[ref.model] = s.spec;
    }
  } catch (err) {
    await Promise.all(served.map((s) => s.stop()));
    throw err;
  }
  return { served, models };
}

export async function evalAgents(
  ctx: StageContext<EvalParams>,
  names: readonly Named[],
  maxTurns: number,
): Promise<EvalAgents> {
  const p = ctx.params;
  const sampling = {
    temperature: p.temperature,
    max_tokens: p.max_tokens,
    seed: p.seed,
    stop: p.stop,
    logprobs: p.logprobs,
  };
  // `provider: worker` policies are served for this node; the response cache is left out for them, since
  // its key names the model, not the weights a worker loaded (the node's own key covers them).
  const { served, models } = await serveWorkers(ctx, names);
  const llm: PolicyOptions = { cacheDir: join(ctx.cacheRoot, 'llm'), sampling, log: ctx.log };
  const policies = names.map(({ name, ref }) =>
    makePolicy(name, ref, models, {
      ...llm,
      cacheDir: onWorker(ref, ctx.models) ? undefined : llm.cacheDir,
      inputDirs: ctx.inputs.map((i) => i.dir),
      experimentDir: ctx.experimentDir,
      maxTurns,
    }),
  );
  const intervention = interventionOf(p, models, llm, ctx.signal);
  const actionModel = p.action_model
    ? makePolicy(p.action_model, { kind: 'openai', model: p.action_model }, models, llm)
    : undefined;
  return { policies, scaffold: SCAFFOLDS[p.scaffold](p, intervention, actionModel), intervention, served };
}
