// An eval node's policies as written (policy: or policies:), checked at validation and parsed when it runs.
import { parsePolicy, type PolicyRef } from '../../agents/policies/index.js';
import { ParamError } from '../../core/errors.js';
import type { ParamIssue } from '../contract.js';

/** How policy:/policies: are given wrong (each name itself is checked where it is written). */
export function policyListIssues(p: { policy?: string; policies?: string[] }): ParamIssue[] {
  if (p.policy && p.policies)
    return [{ param: ['policy'], message: 'give policy: or policies:, not both', also: ['policies'] }];
  const names = p.policies ?? (p.policy ? [p.policy] : []);
  if (!names.length)
    return [
      {
        param: ['policies'],
        message: 'no policy: give policy: (scripted:forest, or a models: name) or policies:',
        also: ['policy'],
      },
    ];
  if (new Set(names).size !== names.length) return [{ param: ['policies'], message: 'a policy is listed twice' }];
  return [];
}

/** The policy names of a node, checked; a bad one is an error at its position in the file. */
export function policyNames(
  p: { policy?: string; policies?: string[] },
  models: Parameters<typeof parsePolicy>[1],
): Array<{ name: string; ref: PolicyRef }> {
  for (const issue of policyListIssues(p)) throw new ParamError(issue.param, issue.message);
  const names = p.policies ?? [p.policy!];
  return names.map((name, i) => {
    const ref = parsePolicy(name, models);
    if ('error' in ref) throw new ParamError(p.policies ? ['policies', i] : ['policy'], ref.error);
    return { name, ref };
  });
}
