// result.json, the one file python/mledojo_grade.py writes for a run (its grade() says how each field is made):
// read here, checked field by field, so that a driver and an adapter that drifted apart fail with the field's
// name rather than as a row of nulls.
import { InternalError } from '../../../core/errors.js';

export interface DojoResult {
  readonly competition: string;
  readonly solver: string;
  readonly exit_code: number | null;
  readonly executes: number;
  readonly steps: number;
  readonly submissions: number;
  readonly valid: boolean;
  readonly journal: string | null;
  /** What MLE-Dojo's env recorded (env_history/history.json). */
  readonly harness: { readonly best_raw_score: number | null; readonly best_position_score: number | null };
  /** The chosen submission, relative to the run's folder (valid runs). */
  readonly submission?: string;
  readonly raw_score: number | null;
  /** MLE-Dojo's position score averaged over the boards present, in [0, 1] (valid runs). */
  readonly human_rank: number | null;
  /** Our grade equals what the env recorded (valid runs). */
  readonly agrees?: boolean;
  readonly failure?: string;
}

const num = (v: unknown): v is number | null => v === null || typeof v === 'number';

export function readDojoResult(text: string, file: string): DojoResult {
  const r = JSON.parse(text) as Record<string, unknown>;
  const bad = (field: string) => new InternalError(`${file}: field ${field} is missing or of the wrong type`);
  for (const f of ['competition', 'solver'] as const) if (typeof r[f] !== 'string') throw bad(f);
  for (const f of ['executes', 'steps', 'submissions'] as const) if (typeof r[f] !== 'number') throw bad(f);
  if (typeof r.valid !== 'boolean') throw bad('valid');
  const h = r.harness as Record<string, unknown> | undefined;
  if (!h || !num(h.best_raw_score ?? null) || !num(h.best_position_score ?? null)) throw bad('harness');
  const raw = r.raw_score ?? null;
  const rank = r.human_rank ?? null;
  if (!num(raw)) throw bad('raw_score');
  if (!num(rank) || (rank !== null && (rank < 0 || rank > 1))) throw bad('human_rank');
  if (!r.valid && typeof r.failure !== 'string') throw bad('failure');
  return { ...(r as unknown as DojoResult), raw_score: raw, human_rank: rank, journal: (r.journal as string) ?? null };
}
