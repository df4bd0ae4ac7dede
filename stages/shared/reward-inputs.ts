// What a stage's reward reads besides its formula (core/rewards/presets.ts,
// RewardInputs), checked where eval and grpo nodes are validated: an input
// the node's rollouts cannot give is refused at the param that asks for it.
import { rewardInputs, type RewardInputs } from '../../core/rewards/presets.js';
import type { ParamIssue } from '../contract.js';

interface Asked {
  reward?: string;
  submission?: RewardInputs['submission'];
  format_rule?: RewardInputs['format_rule'];
  prompt_format?: string;
  scaffold: string;
}

export function rewardInputIssues(p: Asked, rewards: Readonly<Record<string, string>>): ParamIssue[] {
  const out: ParamIssue[] = [];
  const inputs = rewardInputs(p.reward, rewards, p);
  // Only the release's format has a Score tool whose grades the rollout keeps.
  if (inputs.submission === 'last-scored' && p.prompt_format !== 'sandmle-release') {
    out.push(
      p.submission
        ? {
            param: ['submission'],
            message: 'submission: last-scored needs the Score tool of prompt_format: sandmle-release',
            also: ['prompt_format'],
          }
        : {
            param: ['reward'],
            message: `reward: ${p.reward} rewards the last scored submission, which needs the Score tool of prompt_format: sandmle-release (or write submission: final)`,
            also: ['prompt_format'],
          },
    );
  }
  if (inputs.format_rule === 'release' && p.scaffold !== 'react')
    out.push({
      param: p.format_rule ? ['format_rule'] : ['reward'],
      message: `format_rule: release reads ReAct replies (scaffold: ${p.scaffold})`,
      also: ['scaffold'],
    });
  return out;
}
