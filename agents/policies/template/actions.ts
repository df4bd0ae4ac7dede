// The template policy's action space: the solution kit's code actions, from
// diagnostics to model families at two capacities, then validate and submit.
import { DESCRIBE, INSPECT, kitSaved, reactText, solveCode } from '../kitcode.js';
import type { PolicyRequest, TurnView } from '../types.js';

export interface TemplateAction {
  id: string;
  kind: 'diagnose' | 'solve' | 'validate' | 'submit';
  strategy?: string;
  size?: string;
}

export const ACTIONS: readonly TemplateAction[] = [
  { id: 'inspect', kind: 'diagnose' },
  { id: 'describe', kind: 'diagnose' },
  { id: 'linear-small', kind: 'solve', strategy: 'linear', size: 'small' },
  { id: 'linear-large', kind: 'solve', strategy: 'linear', size: 'large' },
  { id: 'forest-small', kind: 'solve', strategy: 'forest', size: 'small' },
  { id: 'forest-large', kind: 'solve', strategy: 'forest', size: 'large' },
  { id: 'gbm-small', kind: 'solve', strategy: 'gbm', size: 'small' },
  { id: 'gbm-large', kind: 'solve', strategy: 'gbm', size: 'large' },
  { id: 'blend', kind: 'solve', strategy: 'blend' },
  { id: 'boosted', kind: 'solve', strategy: 'boosted' },
  { id: 'validate', kind: 'validate' },
  { id: 'submit', kind: 'submit' },
];

/** The reply in ReAct's format for an action (the kit is saved by the first solving step). */
export function renderAction(
  a: TemplateAction,
  history: readonly TurnView[],
  solveTurns: ReadonlySet<number>,
  format?: PolicyRequest['promptFormat'],
  taskId?: string,
): string {
  const think = `template action: ${a.id}`;
  if (a.kind === 'submit') return reactText(format, think, { kind: 'answer', path: 'submission.csv' }, taskId);
  if (a.kind === 'validate') return reactText(format, think, { kind: 'validate', path: 'submission.csv' }, taskId);
  if (a.kind === 'diagnose')
    return reactText(format, think, { kind: 'code', code: a.id === 'inspect' ? INSPECT : DESCRIBE }, taskId);
  return reactText(
    format,
    think,
    {
      kind: 'code',
      code: solveCode(
        a.strategy!,
        kitSaved(history, (i) => solveTurns.has(i)),
        { keepBest: true, size: a.size },
      ),
    },
    taskId,
  );
}
