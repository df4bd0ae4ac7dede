// A step's rollouts as the trainer sees them: groups, advantages, masks,
// and the per-turn text with a loss mask (1 on what the policy wrote, 0 on
// prompts and observations). This is the batch `POST /update` receives
// (schemas/trainer/batch.schema.json) and what the template trainer reads.
import {
  groupAdvantages,
  timedOutUnder,
  unknownEnding,
  turnAdvantages,
  type MaskTimeouts,
  type StdKind,
  type TimeoutRule,
} from '../../agents/grpo/advantages.js';
import { shapedAdvantages } from '../../agents/shaping/returns.js';
import type { TrainSample } from '../../agents/grpo/template-trainer.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { EnvError } from '../../core/errors.js';
import type { Batch, BatchTrajectory, BatchTurn, LossAggMode } from '../../gpu/trainer/batch.js';

/** A rollout that failed to run at all: recorded, never trained on. */
export interface Crashed {
  crashed: true;
  task_id: string;
  group_id: string;
  sample: number;
  error: string;
}

export type Rollout = Trajectory | Crashed;

export const isCrashed = (r: Rollout): r is Crashed => 'crashed' in r;

// The batch's wire shape lives with the trainer client that sends it.
export type { Batch, BatchTrajectory, BatchTurn, LossAggMode };

export interface BatchOptions {
  advantage: 'grpo' | 'drgrpo';
  maskTimeouts: MaskTimeouts;
  timeoutRule: TimeoutRule;
  /** The episodes' turn limit (T_max): under timeout_rule release, an answer on the last call is not unknown. */
  maxTurns: number;
  std: StdKind;
  groupSize: number;
  hyper: Batch['hyper'];
  /**
   * For a trainer worker: every unmasked trajectory's turns as exact tokens,
   * the tokenizer they came from (the worker's /health) and the loss's
   * aggregation. A reply without token ids is refused, never tokenised again.
   */
  exact?: {
    tokenizer: NonNullable<Batch['tokenizer']>;
    lossAggMode: LossAggMode;
    advantageLevel?: 'trajectory' | 'turn';
  };
  /**
   * Turn-level shaping: each trajectory's per-turn rewards r_{i,s} by id. Its advantages are then
   * G_{i,s} − mean G_{i,1} (no std), every reply gets its turn's, and the trajectory's own is its first turn's.
   */
  shaped?: ReadonlyMap<string, readonly number[]>;
}

export function buildBatch(step: number, rollouts: readonly Rollout[], o: BatchOptions): Batch {
  const groups = new Map<string, Rollout[]>();
  for (const r of rollouts) groups.set(r.group_id, [...(groups.get(r.group_id) ?? []), r]);
  const trajectories: BatchTrajectory[] = [];
  const stats: Batch['groups'] = [];
  for (const [groupId, members] of groups) {
    const g = groupAdvantages(
      // A rollout whose policy never replied (its first request failed) has nothing to learn from: as crashed.
      members.map((m) =>
        isCrashed(m) || !m.turns.length
          ? { reward: 0, timedOut: false, crashed: true }
          : {
              reward: m.reward ?? 0,
              timedOut: timedOutUnder(o.timeoutRule, m),
              unknown: unknownEnding(o.timeoutRule, m, o.maxTurns),
              turns: policyTurns(m),
            },
      ),
      { estimator: o.advantage, maskTimeouts: o.maskTimeouts, std: o.std },
    );
    const masks = g.members.map((a) => a.masked);
    const shaped =
      o.shaped &&
      shapedAdvantages(
        members.map((m, i) => ({
          rewards: (!isCrashed(m) && o.shaped!.get(`${groupId}#${m.sample}`)) || [0],
          masked: masks[i],
        })),
      );
    const turns = shaped
      ? shaped.advantages
      : turnAdvantages(
          members.map((m) => ({
            reward: isCrashed(m) ? 0 : (m.reward ?? 0),
            timedOut: false,
            turns: isCrashed(m) ? 1 : policyTurns(m),
          })),
          masks,
        );
    const zero = shaped ? turns.every((t) => t.every((x) => x === 0)) : g.zeroSignal;
    stats.push({
      group_id: groupId,
      mean: shaped ? shaped.baseline : g.mean,
      std: shaped ? 0 : g.std,
      zero_signal: zero,
    });
    members.forEach((m, i) => {
      const a = shaped ? { ...g.members[i], advantage: g.members[i].masked ? 0 : (turns[i][0] ?? 0) } : g.members[i];
      trajectories.push({
        id: `${groupId}#${m.sample}`,
        group_id: groupId,
        task_id: m.task_id,
        sample: m.sample,
        reward: isCrashed(m) ? 0 : (m.reward ?? 0),
        advantage: a.advantage,
        // Equal outcomes zero the trajectory advantage, not turn-level credit: shaping still applies.
        turn_advantages: a.masked ? turns[i].map(() => 0) : turns[i],
        masked: a.masked,
        mask_reason: a.reason ?? null,
        variables: isCrashed(m) ? null : m.variables,
        messages: isCrashed(m) ? [] : batchMessages(m),
        ...(o.exact && !isCrashed(m) && !a.masked ? { turns: exactTurns(m, `${groupId}#${m.sample}`) } : {}),
      });
    });
  }
  const turnLevel = o.shaped || o.exact?.advantageLevel === 'turn' ? { advantage_level: 'turn' as const } : {};
  const exact = o.exact ? { loss_agg_mode: o.exact.lossAggMode, tokenizer: o.exact.tokenizer } : {};
  return {
    format: 'mlepipe-grpo-batch/1',
    step,
    advantage: o.advantage,
    group_size: o.groupSize,
    hyper: o.hyper,
    trajectories,
    groups: stats,
    ...exact,
    ...turnLevel,
  };
}

/** Each reply's recorded tokens; a reply without them stops the step (a worker never re-tokenises). */
function exactTurns(t: Trajectory, id: string): BatchTurn[] {
  return t.turns.map((turn, i) => {
    if (!turn.tokens) {
      throw new EnvError(
        `trajectory ${id}, reply ${i + 1}: the policy's endpoint returned no token ids (prompt_token_ids and per-choice token_ids with logprobs); ` +
          'trainer: worker trains on the exact tokens the policy sampled and never tokenises text again: serve the policy on the trainer worker (or vLLM with return_token_ids)',
      );
    }
    return { prompt_ids: turn.tokens.prompt_ids, token_ids: turn.tokens.token_ids, logprobs: turn.tokens.logprobs };
  });
}

const policyTurns = (t: Trajectory) => Math.max(1, t.turns.length);

/** The conversation with a loss mask, and each reply's token log-probabilities where the policy gave them. */
function batchMessages(t: Trajectory): BatchTrajectory['messages'] {
  let reply = 0;
  return t.messages.map((msg) => {
    if (msg.role !== 'assistant') return { ...msg, loss_mask: 0 as const };
    const turn = t.turns[reply++];
    const lp = turn?.logprobs;
    // The loss is on what the policy generated (its log-probabilities are of that), not the cut the conversation kept.
    const content = turn?.raw_reply ?? msg.content;
    return { ...msg, content, loss_mask: 1 as const, ...(lp ? { logprobs: lp } : {}) };
  });
}

/** The template trainer's samples: every recorded decision of an unmasked trajectory, with its advantage. */
export function templateSamples(batch: Batch, rollouts: readonly Rollout[]): TrainSample[] {
  const byId = new Map(
    rollouts.filter((r): r is Trajectory => !isCrashed(r)).map((r) => [`${r.group_id}#${r.sample}`, r]),
  );
  const out: TrainSample[] = [];
  const turnLevel = batch.advantage_level === 'turn';
  for (const t of batch.trajectories) {
    if (t.masked) continue;
    (byId.get(t.id)?.turns ?? []).forEach((turn, s) => {
      // Turn-level credit: each decision carries its own turn's advantage.
      const advantage = turnLevel ? (t.turn_advantages[s] ?? 0) : t.advantage;
      if (turn.choice && advantage !== 0)
        out.push({
          features: turn.choice.features,
          action: turn.choice.index,
          logprob: turn.choice.logprob,
          advantage,
        });
    });
  }
  return out;
}
