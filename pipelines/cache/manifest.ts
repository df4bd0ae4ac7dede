import type { FileEntry } from '../../core/fs.js';
import type { Metrics } from '../../stages/contract.js';

/** `<cache>/nodes/<key>/manifest.json` (docs/cache.md). */
export interface Manifest {
  key: string;
  node: string;
  kind: string;
  version: number;
  params: Record<string, unknown>;
  inputs: Record<string, string>;
  extras: unknown;
  variant: Record<string, unknown>;
  files: FileEntry[];
  started: string;
  finished: string;
  durationMs: number;
  metrics: Metrics;
  mlepipe: string;
  /** Stages that rescore: the key without their post-hoc params (compile/keys.ts). */
  baseKey?: string;
  /** The entry this one was rescored from, when it was. */
  rescoredFrom?: string;
}
