// The scripted reference agents: random, majority, linear, forest, boosted,
// diagnose (forest after a look at the data with the diagnostic tools, mlab only;
// on a task with a starter script it fixes what the tools reveal) and blind
// (forest; on a task with a starter, one fixed edit without diagnosing) and
// guided (diagnose, calling the tools its task guidance lists: a teacher for
// guided collection that needs no model).
// They answer in the scaffold's format with real code from the solution kit
// (agents/kit/mlekit.py), climbing a ladder of strategies and keeping the
// submission that validates best, so that a larger turn budget can help.
// Graded in strength, they are the offline default and the calibration
// ladder the task factory is checked against.
import { fence, INSPECT, kitSaved, reactText, solveCode } from './kitcode.js';
import { mlabReply } from './mlabscript.js';
import type { Policy, PolicyReply, PolicyRequest } from './types.js';
import { kitSource } from '../kit/source.js';

export const SCRIPTED = ['random', 'majority', 'linear', 'forest', 'boosted', 'diagnose', 'blind', 'guided'] as const;
export type ScriptedName = (typeof SCRIPTED)[number];

/** The strategies each agent tries in order, weakest first. */
const LADDER: Record<ScriptedName, string[]> = {
  random: ['random'],
  majority: ['majority'],
  linear: ['linear'],
  forest: ['linear', 'forest'],
  boosted: ['linear', 'forest', 'boosted'],
  diagnose: ['forest'],
  blind: ['forest'],
  guided: ['forest'],
};

const NO_USAGE = { prompt_tokens: 0, completion_tokens: 0 };

export function scriptedPolicy(name: ScriptedName): Policy {
  const ladder = LADDER[name];
  return {
    name: `scripted:${name}`,
    kind: 'scripted',
    async act(req: PolicyRequest): Promise<PolicyReply> {
      const text =
        req.purpose === 'review'
          ? scriptedReview(req)
          : req.scaffold === 'mlab'
            ? mlabReply(ladder, req, name === 'diagnose' || name === 'guided' ? name : 'blind')
            : req.scaffold === 'aide'
              ? aideReply(ladder, req)
              : reactReply(ladder, req);
      return { text, usage: NO_USAGE };
    },
  };
}

/** ReAct: inspect the data, solve with each rung of the ladder, validate, answer. */
function reactReply(ladder: string[], req: PolicyRequest): string {
  const t = req.turn;
  if (t === 0)
    return reactText(
      req.promptFormat,
      'First look at the data and the submission format.',
      { kind: 'code', code: INSPECT },
      req.task?.id,
    );
  const rung = t - 1;
  if (rung < ladder.length) {
    const saved = kitSaved(req.history, (i) => i > 0);
    const why =
      rung === 0
        ? `Start with the ${ladder[0]} strategy.`
        : `Try ${ladder[rung]} and keep it only if it validates better.`;
    return reactText(req.promptFormat, why, { kind: 'code', code: solveCode(ladder[rung], saved) }, req.task?.id);
  }
  const last = req.history[req.history.length - 1];
  if (last?.action !== 'validate')
    return reactText(
      req.promptFormat,
      'Check the submission format before finishing.',
      { kind: 'validate', path: 'submission.csv' },
      req.task?.id,
    );
  if (!/^(valid|Submission OK)/i.test(last.observation)) {
    // The format check failed: fall back to the class prior / mean, which always has the right shape.
    if (req.history.filter((h) => h.action === 'validate').length < 2)
      return reactText(
        req.promptFormat,
        'The submission is malformed; write the simplest valid one.',
        { kind: 'code', code: solveCode('majority', false, { keepBest: false }) },
        req.task?.id,
      );
  }
  return reactText(
    req.promptFormat,
    'The submission is in place.',
    { kind: 'answer', path: 'submission.csv' },
    req.task?.id,
  );
}

/** The last `validation score: X` a script printed. */
export function printedScore(stdout: string): number | null {
  const all = [...stdout.matchAll(/validation score[^:\n]*:\s*(-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)/gi)];
  const v = all.length ? Number(all[all.length - 1][1]) : NaN;
  return Number.isFinite(v) ? v : null;
}

/**
 * AIDE's review, answered without a model: a run that failed is a bug; otherwise the metric is the last
 * `validation score:` it printed (none when it printed none), in the task's direction.
 */
function scriptedReview(req: PolicyRequest): string {
  const run = req.executed;
  const failed = !run || run.timed_out || run.exit_code !== 0;
  const metric = failed ? null : printedScore(run.output);
  return JSON.stringify({
    is_bug: failed,
    summary: failed ? 'The run failed; see its error output.' : `The run printed a validation score of ${metric}.`,
    metric,
    lower_is_better: req.task?.is_lower_better ?? false,
  });
}

/** AIDE: drafts walk up the ladder; improving moves a node one rung up; debugging falls back to the prior. */
function aideReply(ladder: string[], req: PolicyRequest): string {
  let strategy: string;
  // Drafts come first in the search, so the node index counts them.
  if (req.purpose === 'draft') strategy = ladder[req.turn % ladder.length];
  else if (req.purpose === 'debug') strategy = 'majority';
  else {
    // The last call in the parent's script (the kit's own comments mention solve("forest") too).
    const calls = [...(req.parent?.code ?? '').matchAll(/^solve\("(\w+)"/gm)];
    const current = calls.length ? calls[calls.length - 1][1] : ladder[0];
    strategy = ladder[Math.min(ladder.indexOf(current) + 1, ladder.length - 1)] ?? ladder[ladder.length - 1];
  }
  const plan = `${req.purpose === 'draft' ? 'Draft' : req.purpose === 'debug' ? 'Debug' : 'Improve'}: solve with the ${strategy} strategy and print a validation score.`;
  return `${plan}\n${fence(`${kitSource()}\n\nsolve(${JSON.stringify(strategy)})`)}`;
}
