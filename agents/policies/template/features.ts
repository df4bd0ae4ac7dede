// What the template policy conditions on: the task's public facts (modality,
// task type, size, metric direction) and the episode so far (turn, the last
// action and how it went, whether a submission exists and was validated).
import type { TaskMeta, TurnView } from '../types.js';

const MODALITIES = ['tabular', 'image', 'text', 'audio', 'graph', 'time-series'];
const LAST = ['none', 'diagnose', 'solve', 'validate', 'invalid'];

export const FEATURE_NAMES = [
  'bias',
  ...MODALITIES.map((m) => `modality:${m}`),
  'regression',
  'lower_is_better',
  'log_rows',
  'turn_fraction',
  'last_turn',
  ...LAST.map((l) => `last:${l}`),
  'last_failed',
  'last_improved',
  'solves_ok',
  'has_submission',
  'validated',
];

/** Which action kind each earlier turn was, read back from the replies the policy gave. */
export type TurnKind = 'diagnose' | 'solve' | 'validate' | 'submit' | 'invalid';

export function features(
  task: TaskMeta | undefined,
  history: readonly TurnView[],
  kinds: readonly TurnKind[],
  turn: number,
  maxTurns: number,
): number[] {
  const last = history.length ? history[history.length - 1] : undefined;
  const lastKind = last ? (kinds[kinds.length - 1] ?? 'invalid') : 'none';
  const solvedOk = history.filter((h, i) => kinds[i] === 'solve' && h.exit_code === 0);
  const wrote = solvedOk.some((h) => /wrote submission\.csv/.test(h.observation));
  const validated = history.some((h) => h.action === 'validate' && /^valid/.test(h.observation));
  const rows = Math.max(task?.n_train ?? 100, 1);
  return [
    1,
    ...MODALITIES.map((m) => Number(task?.modality === m)),
    Number(/regression|forecast/.test(task?.task_type ?? '')),
    Number(task?.is_lower_better ?? false),
    Math.log10(rows) / 3,
    maxTurns > 1 ? turn / (maxTurns - 1) : 1,
    Number(turn === maxTurns - 1),
    ...LAST.map((l) => Number(lastKind === l)),
    Number(!!last && (last.timed_out || (last.action === 'code' && last.exit_code !== 0) || last.action === 'invalid')),
    Number(!!last && kinds[kinds.length - 1] === 'solve' && /wrote submission\.csv/.test(last.observation)),
    Math.min(solvedOk.length, 3) / 3,
    Number(wrote),
    Number(validated),
  ];
}
