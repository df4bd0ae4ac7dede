// The ReAct scaffold SandMLE trains with: the policy reasons, then runs one
// python block, validates the submission, or answers; each execution's
// observation goes back as the next user message. Ends on an answer, after
// T_max turns, or when the episode's time budget is spent. The reply format
// is mlepipe's tags (parse.ts) or the released code's tool calls (release.ts).
import { publicFilesText, sampleName } from '../public.js';
import { renderPrompt } from '../../factory/answers.js';
import type { ChatMessage } from '../../llm/client.js';
import { execute, observation } from '../execute.js';
import type { EpisodeContext, EpisodeResult, Scaffold, TurnRecord } from '../types.js';
import { ask, budget, newUsage } from '../turns.js';
import { fitContext } from './context.js';
import { parseReply } from './parse.js';
import { parseReleaseReply, releaseObservation } from './release.js';

export const react: Scaffold = {
  name: 'react',
  async run(ctx: EpisodeContext): Promise<EpisodeResult> {
    const { limits } = ctx;
    const started = Date.now();
    const release = ctx.promptFormat === 'sandmle-release';
    const parse = release ? parseReleaseReply : parseReply;
    const wrap = release ? releaseObservation : (obs: string) => obs;
    const messages: ChatMessage[] = [
      { role: 'system', content: renderPrompt(release ? 'react/system-release' : 'react/system', { max_turns: limits.maxTurns, step_timeout: Math.round(limits.stepTimeoutMs / 1000), files: publicFilesText(ctx.task), sample: sampleName(ctx.task) }) },
      { role: 'user', content: renderPrompt('react/task', { description: ctx.task.description.trim() }) },
    ];
    const turns: TurnRecord[] = [];
    const usage = newUsage();
    let dropped = 0;
    let submission: string | null = null;
    let ended: EpisodeResult['ended'] = 'max_turns';
    let error: string | undefined;
    for (let t = 0; t < limits.maxTurns; t++) {
      const b = budget(ctx, started);
      if ('stop' in b) {
        ended = b.stop;
        break;
      }
      const shown = fitContext(messages, 2, turns.map(failed), limits.contextTokens);
      dropped = Math.max(dropped, shown.dropped);
      const reply = await ask(ctx, { scaffold: 'react', purpose: 'step', messages: shown.messages, turn: t, sample: ctx.sample, history: turns, ...(release ? { promptFormat: 'sandmle-release' as const } : {}) }, usage);
      if ('stop' in reply) {
        ended = reply.stop;
        error = reply.error;
        break;
      }
      const text = reply.text;
      const choice = reply.choice;
      messages.push({ role: 'assistant', content: text });
      const { action, formatOk } = parse(text);
      const base = { turn: t, format_ok: formatOk, exit_code: null, timed_out: false, duration_ms: 0, ...(choice ? { choice } : {}), ...(reply.logprobs ? { logprobs: reply.logprobs } : {}), ...(reply.tokens ? { tokens: reply.tokens } : {}) };
      if (action.kind === 'answer') {
        submission = action.path;
        turns.push({ ...base, action: 'answer', observation: `submitted ${action.path}` });
        ended = 'answer';
        break;
      }
      let obs: string;
      if (action.kind === 'invalid') {
        obs = `format error: ${action.reason}`;
        turns.push({ ...base, action: 'invalid', observation: obs });
      } else if (action.kind === 'validate') {
        const t0 = Date.now();
        const v = await ctx.validate(action.path);
        obs = !v.ok ? `invalid submission: ${v.problem}` : v.feedback ? `valid: ${action.path} ${v.feedback}` : `valid: ${action.path} has the submission's format (it was not scored)`;
        turns.push({ ...base, action: 'validate', observation: obs, duration_ms: Date.now() - t0 });
      } else {
        const timeout = Math.min(limits.stepTimeoutMs, b.left);
        const r = await execute(ctx.session, action.code, t, timeout);
        obs = observation(r, limits.observationChars, timeout);
        turns.push({ ...base, action: 'code', code: action.code, observation: obs, exit_code: r.timedOut ? null : r.exitCode, timed_out: r.timedOut, duration_ms: r.durationMs });
      }
      messages.push({ role: 'user', content: wrap(obs) });
    }
    // Out of turns or time without an answer: the last submission written is graded, as MLE-bench does.
    return { scaffold: 'react', messages, turns, submission: submission ?? 'submission.csv', ended, error, dropped_turns: dropped, usage };
  },
};

function failed(t: TurnRecord): boolean {
  return t.action === 'invalid' || (t.action === 'code' && (t.timed_out || t.exit_code !== 0));
}
