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
import { parseReply, type ParsedReply } from './parse.js';
import { releaseObservation, releaseParser, type ReleaseReply } from './release.js';
import { releaseTimeout, scoreAnswer, scoreRefusal } from './release-text.js';

export const react: Scaffold = {
  name: 'react',
  async run(ctx: EpisodeContext): Promise<EpisodeResult> {
    const { limits } = ctx;
    const started = Date.now();
    const release = ctx.promptFormat === 'sandmle-release';
    const parse: (text: string) => ParsedReply & Partial<ReleaseReply> = release
      ? releaseParser(ctx.task.id)
      : parseReply;
    const stepSeconds = Math.round(limits.stepTimeoutMs / 1000);
    const messages: ChatMessage[] = [
      {
        role: 'system',
        content: renderPrompt(release ? 'react/system-release' : 'react/system', {
          max_turns: limits.maxTurns,
          step_timeout: stepSeconds,
          files: publicFilesText(ctx.task),
          sample: sampleName(ctx.task),
          ...(release ? { competition_id: ctx.task.id } : {}),
        }),
      },
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
      const reply = await ask(
        ctx,
        {
          scaffold: 'react',
          purpose: 'step',
          messages: shown.messages,
          turn: t,
          sample: ctx.sample,
          history: turns,
          ...(release ? { promptFormat: 'sandmle-release' as const } : {}),
        },
        usage,
      );
      if ('stop' in reply) {
        ended = reply.stop;
        error = reply.error;
        break;
      }
      const text = reply.text;
      const choice = reply.choice;
      messages.push({ role: 'assistant', content: text });
      const { action, formatOk, toolCall, answers } = parse(text);
      // The release answers every tool call with a tool response, and none to a reply without one.
      const base = {
        turn: t,
        format_ok: formatOk,
        ...(release ? { tool_response: toolCall === true } : {}),
        exit_code: null,
        timed_out: false,
        duration_ms: 0,
        ...(choice ? { choice } : {}),
        ...(reply.logprobs ? { logprobs: reply.logprobs } : {}),
        ...(reply.tokens ? { tokens: reply.tokens } : {}),
      };
      if (action.kind === 'answer') {
        submission = action.path;
        turns.push({ ...base, action: 'answer', observation: `submitted ${action.path}` });
        ended = 'answer';
        break;
      }
      let obs: string;
      if (action.kind === 'invalid') {
        // A call the release cannot make is answered in its words; a reply without a call gets mlepipe's format error.
        obs = toolCall ? action.reason : `format error: ${action.reason}`;
        turns.push({ ...base, action: 'invalid', observation: obs });
      } else if (action.kind === 'validate') {
        const t0 = Date.now();
        const v = await ctx.validate(action.path);
        // The release's Score tool always shows the score and thresholds.
        if (release) obs = v.ok ? scoreAnswer(v.result, action.path) : scoreRefusal(v.problem, action.path);
        else
          obs = !v.ok
            ? `invalid submission: ${v.problem}`
            : v.feedback
              ? `valid: ${action.path} ${v.feedback}`
              : `valid: ${action.path} has the submission's format (it was not scored)`;
        turns.push({
          ...base,
          action: 'validate',
          observation: obs,
          duration_ms: Date.now() - t0,
          ...(v.ok ? { evaluation: v.result } : {}),
        });
      } else {
        const timeout = Math.min(limits.stepTimeoutMs, b.left);
        const r = await execute(ctx.session, action.code, t, timeout);
        obs = release && r.timedOut ? releaseTimeout(stepSeconds) : observation(r, limits.observationChars, timeout);
        turns.push({
          ...base,
          action: 'code',
          code: action.code,
          observation: obs,
          exit_code: r.timedOut ? null : r.exitCode,
          timed_out: r.timedOut,
          duration_ms: r.durationMs,
        });
      }
      messages.push({ role: 'user', content: release && toolCall ? releaseObservation(obs) : obs });
      if (answers) {
        // The release acts on the call, then ends on the answer in the same reply.
        ended = 'answer';
        break;
      }
    }
    // Out of turns or time without an answer: the last submission written is graded, as MLE-bench does.
    return {
      scaffold: 'react',
      messages,
      turns,
      submission: submission ?? 'submission.csv',
      ended,
      error,
      dropped_turns: dropped,
      usage,
    };
  },
};

function failed(t: TurnRecord): boolean {
  return t.action === 'invalid' || (t.action === 'code' && (t.timed_out || t.exit_code !== 0));
}
