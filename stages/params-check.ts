// Each stage kind's hand-written *Params interface must be the type its JSON
// Schema describes once validated (stages/params.gen.ts, generated from the
// schemas): each assignable to the other, so a property added, dropped,
// made optional or given another type on one side only fails the type
// check, naming the kind. Nothing imports this module; `npm run typecheck`
// compiles it.
import type { TimeoutRule } from '../agents/grpo/advantages.js';
import type { Stage } from './contract.js';
import type { Agrees } from './params-agree.js';
import type { SchemaParams } from './params.gen.js';
import type { STAGES, StageKind } from './registry.js';

type ParamsOf<S> = S extends Stage<infer P> ? P : never;

/** Params a stage's resolve() always fills in, though the schema lets them be left out. */
interface FilledByResolve {
  grpo: 'max_turns' | 'step_timeout' | 'time_budget' | 'mask_timeouts';
}
type Filled<K extends keyof SchemaParams> = K extends keyof FilledByResolve
  ? Omit<SchemaParams[K], FilledByResolve[K]> & Required<Pick<SchemaParams[K], FilledByResolve[K]>>
  : SchemaParams[K];

/**
 * Strings the schema checks with a pattern, which the code types as the values the pattern admits
 * (a type has no regular expressions); each must still be a string the schema accepts.
 */
interface NarrowedByPattern {
  grpo: { timeout_rule: TimeoutRule };
}
type Narrowed<K extends keyof SchemaParams> = K extends keyof NarrowedByPattern
  ? Omit<Filled<K>, keyof NarrowedByPattern[K]> & NarrowedByPattern[K]
  : Filled<K>;
export const narrowingsAreStrings: {
  [K in keyof NarrowedByPattern]: {
    [P in keyof NarrowedByPattern[K]]: NarrowedByPattern[K][P] extends SchemaParams[K][P & keyof SchemaParams[K]]
      ? true
      : false;
  };
} = {
  grpo: { timeout_rule: true },
};
/** A kind's params as the code receives them: defaults and resolve() filled in, patterned strings narrowed. */
type Resolved<K extends keyof SchemaParams> = Narrowed<K>;

/** For each kind: whether its interface and its schema agree (`'no schema'` when it has none). */
type Agreement = {
  [K in StageKind]: K extends keyof SchemaParams ? Agrees<ParamsOf<(typeof STAGES)[K]>, Resolved<K>> : 'no schema';
};

// Every kind of the registry must be listed (the mapped type asks for each); one whose interface and
// schema disagree fails here on its own line, `true` against `false`.
export const agreement: Agreement = {
  shell: true,
  ablate: true,
  generate: true,
  mlebench: true,
  mltoolbench: true,
  filter: true,
  guide: true,
  eval: true,
  harness: true,
  curate: true,
  grpo: true,
  sft: true,
};
