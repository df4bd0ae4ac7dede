import type { Diagnostic } from '../../../core/errors.js';
import type { WrittenExperiment, WrittenStage } from '../../config/types.js';
import type { Origins } from '../../../core/source.js';

/** Every name written in a section, including entries the schema refused (so naming them is no second error). */
export interface WrittenNames {
  readonly stages: readonly string[];
  readonly models: readonly string[];
  readonly rewards: readonly string[];
  /** Stage id → the keys its entry was written with, refused ones included (a key the schema refused is no "missing" key). */
  readonly stageKeys: ReadonlyMap<string, readonly string[]>;
}

/** What every rule sees: the parts of the document that passed the schema, with origins for positions. */
export interface RuleInput {
  readonly doc: WrittenExperiment;
  readonly names: WrittenNames;
  /** Stage id → `with:` after defaults, for stages whose kind exists and whose params validated. */
  readonly params: ReadonlyMap<string, Record<string, unknown>>;
  /** Stage id → top-level `with:` keys the schema refused, left out of its params (checks that read them are skipped). */
  readonly refused: ReadonlyMap<string, readonly string[]>;
  readonly origins: Origins;
  /** The experiment file's folder: relative paths in params are relative to it. */
  readonly experimentDir: string;
}

export type Rule = (input: RuleInput) => Diagnostic[];

export function stageEntries(doc: WrittenExperiment): [string, WrittenStage][] {
  return Object.entries(doc.stages ?? {});
}
