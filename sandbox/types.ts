// The sandbox contract (docs/sandbox.md): agent-written Python runs with no network,
// a read-only view of the task's public/ files, a read-write workspace, and
// hard limits; private/ is never inside.

export type BackendName = 'process' | 'bwrap' | 'docker';

export interface Limits {
  /** Wall clock for the step; every process it started is killed after it. */
  timeoutMs: number;
  /** Memory cap (address space per process, and the whole step where cgroups are available). */
  memoryMb: number;
  /** Processes and threads the step may have at once. */
  maxProcs: number;
  /** Bytes kept of stdout and of stderr each; the rest is dropped with a marker. */
  maxOutputBytes: number;
  /** Largest file the step may write, and (best effort) the workspace as a whole. */
  maxWorkspaceMb: number;
  /** CPU share: thread pools (OMP, OpenBLAS, MKL) are pinned to it. */
  cpus: number;
}

export const DEFAULT_LIMITS: Limits = {
  timeoutMs: 90_000,
  memoryMb: 2048,
  maxProcs: 256,
  maxOutputBytes: 256 * 1024,
  maxWorkspaceMb: 1024,
  cpus: 1,
};

export interface StepResult {
  exitCode: number;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  truncated: boolean;
  durationMs: number;
  backend: BackendName | 'warm-bwrap' | 'warm-docker';
  /** Set when the workspace grew past maxWorkspaceMb. */
  workspaceExceeded?: boolean;
  /** Set when the step went over its memory cap: it was stopped there, or its allocation failed (MemoryError). */
  oom?: boolean;
  /** Set when the step was stopped because its session's signal aborted (the run is being interrupted). */
  interrupted?: boolean;
}

/** What to run: a Python file already in the workspace (relative path), with arguments. */
export interface Step {
  file: string;
  args?: string[];
}

/** One agent's place to work: a workspace next to a task's public files. Steps run one at a time. */
export interface Session {
  readonly backend: StepResult['backend'];
  /** Host path of the workspace; the host reads results (submission.csv) from here. */
  readonly workspace: string;
  run(step: Step, limits?: Partial<Limits>): Promise<StepResult>;
  close(): Promise<void>;
}

export interface SessionOptions {
  /** Task folder (its public/ is shown to the agent; nothing else of it is). */
  task: string;
  limits?: Partial<Limits>;
  /** Aborting it stops the running step (and refuses later ones) at once, and gives up waiting for a jail. */
  signal?: AbortSignal;
}

export interface Backend {
  readonly name: BackendName;
  open(opts: SessionOptions): Promise<Session>;
}
