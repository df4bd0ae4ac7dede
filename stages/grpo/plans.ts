// The rollout plans of a run trained step by step: a step's batch, the shaping pilot's batches and the
// validation pass, all sampled in the stage's jails with the episode limits the stage's params set.
import type { Policy } from '../../agents/policies/types.js';
import { mlabScaffold } from '../../agents/scaffolds/mlab/index.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { Scaffold } from '../../agents/scaffolds/types.js';
import type { Sandbox } from '../../sandbox/index.js';
import type { TaskRef } from '../shared/tasks.js';
import { CONTEXT_TOKENS } from './index.js';
import { pickBatch, type RolloutPlan } from './rollouts.js';
import type { GrpoRun } from './trainers/contract.js';

/** Characters kept of stdout and of stderr in an observation (the sandbox service keeps as many). */
export const OBSERVATION_CHARS = 4000;

export interface RunPlans {
  /** Step k's batch of training tasks, group_size rollouts each. */
  step(k: number, policy: Policy): RolloutPlan;
  /** The shaping pilot's batch j: step j's tasks, sampled by the policy before any update, never trained on. */
  pilot(j: number, policy: Policy): RolloutPlan;
  /** One rollout per validation task, after step k, with every tool offered. */
  val(k: number, policy: Policy): RolloutPlan;
}

export function runPlans(
  { ctx, p, train, val, formula, inputs, release }: GrpoRun,
  sandbox: Sandbox,
  signal: () => AbortSignal,
): RunPlans {
  const mlab = (toolDropout: number) => mlabScaffold({ tools: p.tools ?? 'domain', toolDropout, seed: p.seed });
  const scaffolds = {
    train: p.scaffold === 'mlab' ? mlab(p.tool_dropout) : react,
    // Validation offers every tool: dropout is a training-time control.
    val: p.scaffold === 'mlab' ? mlab(0) : react,
  };
  const plan = (tasks: TaskRef[], group: number, policy: Policy, prefix: string, scaffold: Scaffold): RolloutPlan => ({
    sandbox,
    policy,
    scaffold,
    tasks,
    group,
    groupPrefix: prefix,
    limits: {
      maxTurns: p.max_turns,
      stepTimeoutMs: p.step_timeout * 1000,
      timeBudgetMs: p.time_budget * 1000,
      contextTokens: CONTEXT_TOKENS,
      observationChars: OBSERVATION_CHARS,
    },
    memoryMb: p.memory_mb,
    promptFormat: p.prompt_format,
    release,
    python: ctx.python,
    seed: p.seed,
    reward: formula,
    inputs,
    concurrency: p.concurrency,
    signal: signal(),
  });
  const batch = (k: number) => pickBatch(train, p.batch_size, k, p.seed);
  return {
    step: (k, policy) => plan(batch(k), p.group_size, policy, `step${k}`, scaffolds.train),
    pilot: (j, policy) => plan(batch(j), p.group_size, policy, `pilot${j}`, scaffolds.train),
    val: (k, policy) => plan(val, 1, policy, `step${k}`, scaffolds.val),
  };
}
