import type { Diagnostic } from '../../../core/errors.js';
import type { Settings, WrittenExperiment, WrittenStage } from '../../config/types.js';
import type { Origins } from '../../../core/source.js';

/** What every rule sees: the schema-valid document, with origins for positions. */
export interface RuleInput {
  readonly doc: WrittenExperiment;
  /** Stage id → `with:` after defaults, for stages whose kind exists and whose params validated. */
  readonly params: ReadonlyMap<string, Record<string, unknown>>;
  readonly origins: Origins;
  readonly settings: Settings;
}

export type Rule = (input: RuleInput) => Diagnostic[];

export function stageEntries(doc: WrittenExperiment): [string, WrittenStage][] {
  return Object.entries(doc.stages ?? {});
}
