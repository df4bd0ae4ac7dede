// Every stage kind mlepipe knows. Adding a name to StageKind without an
// implementation, or an implementation without its name, fails to compile.
import { ablate } from './ablate/index.js';
import type { Stage } from './contract.js';
import { evalStage } from './eval/index.js';
import { curate } from './curate/index.js';
import { filter } from './filter/index.js';
import { generate } from './generate/index.js';
import { grpo } from './grpo/index.js';
import { guide } from './guide/index.js';
import { harness } from './harness/index.js';
import { mlebench } from './mlebench/index.js';
import { mltoolbench } from './mltoolbench/index.js';
import { sft } from './sft/index.js';
import { shell } from './shell/index.js';

export type StageKind =
  | 'shell'
  | 'ablate'
  | 'generate'
  | 'mlebench'
  | 'mltoolbench'
  | 'filter'
  | 'guide'
  | 'eval'
  | 'harness'
  | 'curate'
  | 'grpo'
  | 'sft';

export const STAGES = {
  shell,
  ablate,
  generate,
  mlebench,
  mltoolbench,
  filter,
  guide,
  eval: evalStage,
  harness,
  curate,
  grpo,
  sft,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
} as const satisfies { readonly [K in StageKind]: Stage<any> };

/** Kinds described in the design that later work adds; named so errors can say so. */
export const PLANNED_KINDS: readonly string[] = [];

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export function getStage(kind: string): Stage<any> | undefined {
  return Object.hasOwn(STAGES, kind) ? STAGES[kind as StageKind] : undefined;
}

export function stageKinds(): StageKind[] {
  return Object.keys(STAGES) as StageKind[];
}
