// The mlab-only params of an eval node (tools:, tool_dropout, intervention, guidance, action_model), checked
// against its scaffold and the tool registry.
import { TOOLS_BY_NAME } from '../../tools/index.js';
import type { ParamIssue } from '../contract.js';
import type { EvalParams } from './index.js';

/** tools:, tool_dropout, intervention and action_model only mean something to mlab; named tools must exist. */
export function toolIssues(
  p: Pick<EvalParams, 'scaffold' | 'tools' | 'tool_dropout' | 'intervention' | 'guidance' | 'action_model'>,
): ParamIssue[] {
  const issues: ParamIssue[] = [];
  for (const k of ['tools', 'tool_dropout', 'intervention'] as const)
    if (p[k] !== undefined && p.scaffold !== 'mlab')
      issues.push({ param: [k], message: `${k}: only the mlab scaffold offers tools (scaffold: ${p.scaffold})` });
  if (p.action_model !== undefined && p.scaffold !== 'mlab')
    issues.push({
      param: ['action_model'],
      message: `action_model: only the mlab scaffold has AI actions (scaffold: ${p.scaffold})`,
    });
  if (p.guidance && p.scaffold !== 'mlab')
    issues.push({
      param: ['guidance'],
      message: `guidance: only the mlab scaffold puts guidance in a teacher's prompt (scaffold: ${p.scaffold})`,
    });
  if (Array.isArray(p.tools))
    p.tools.forEach(
      (n: string, i) =>
        TOOLS_BY_NAME.has(n) ||
        issues.push({ param: ['tools', i], message: `unknown tool "${n}" (mlepipe tools list shows them)` }),
    );
  const iv = p.intervention;
  if (iv && Array.isArray(iv.tools))
    iv.tools.forEach(
      (n: string, i) =>
        TOOLS_BY_NAME.has(n) ||
        issues.push({
          param: ['intervention', 'tools', i],
          message: `unknown tool "${n}" (mlepipe tools list shows them)`,
        }),
    );
  if (iv && iv.mode !== 'none' && p.tools === 'none')
    issues.push({
      param: ['intervention'],
      message: 'tools: none offers no diagnostic tool whose answer could be changed',
      also: ['tools'],
    });
  if (iv?.branch && p.scaffold === 'mlab' && p.tools === 'none')
    issues.push({
      param: ['intervention', 'branch'],
      message: 'tools: none offers no diagnostic tool to branch at',
      also: ['tools'],
    });
  return issues;
}
