// The stage contract: every `uses:` kind is one object of this shape in the
// registry. The engine knows nothing else about a stage.
import type { ModelSpec } from '../core/models.js';
import type { EnvName } from '../core/python.js';
import type { PythonIdentity } from '../core/python-identity.js';
import type { JsonSchema } from '../core/schema.js';
import type { EngineSpec } from '../sandbox/hosts.js';

export type MetricValue = number | string | boolean | null;
export type Metrics = Record<string, MetricValue>;

/** Where training metrics go besides metrics.jsonl (project settings' logger:, stages/train-log.ts). */
export type Tracker = 'tensorboard' | 'wandb';

/** An upstream node as a stage sees it. */
export interface InputNode {
  /** Stage name it came from (`rl`), shared by all its variants. */
  readonly name: string;
  /** Node id (`rl@reward=sparse`). */
  readonly id: string;
  readonly key: string;
  /** Its output directory in the cache (read-only by convention). */
  readonly dir: string;
  readonly metrics: Readonly<Metrics>;
  /** Matrix values this node was made with; empty outside ablations. */
  readonly variant: Readonly<Record<string, unknown>>;
}

/**
 * Finished items of a long node, kept outside the node's entry so a crash
 * loses at most the item in flight (one generated task, one rollout step).
 */
export interface ItemStore {
  /** Folder of this node's items; stable across attempts of the same key. */
  readonly root: string;
  /** The finished item's folder, or undefined. */
  get(id: string): Promise<string | undefined>;
  /** Runs `write` into a fresh folder and publishes it atomically; returns the folder. */
  put(id: string, write: (dir: string) => Promise<void>): Promise<string>;
  /** Ids of finished items. */
  list(): Promise<string[]>;
}

/** A node's progress: `done` of `total` units of its work. */
export interface ProgressReport {
  readonly done: number;
  readonly total?: number;
  /** What is counted, plural: `episodes`, `steps`, `tasks`, … */
  readonly unit: string;
  /** The one-line summary of the latest finished unit, as the node log has it (a training step's reward). */
  readonly summary?: string;
}

export interface StageContext<P> {
  readonly node: {
    readonly id: string;
    readonly name: string;
    readonly key: string;
    readonly variant: Readonly<Record<string, unknown>>;
  };
  readonly params: P;
  /** The experiment file's folder: relative paths in params are relative to it. */
  readonly experimentDir: string;
  readonly projectRoot: string;
  /** The Python interpreter for host-side scripts: settings' `python:`, else what choosePython finds (core/python.ts). */
  readonly python: string;
  /** The cache root, for content-addressed stores shared across nodes (the LLM response cache). */
  readonly cacheRoot: string;
  /** Where untrusted or generated code runs (project settings). */
  readonly sandbox: {
    readonly backend: 'bwrap' | 'docker' | 'process';
    readonly image?: string;
    readonly preload?: readonly string[];
  };
  /** The Ray cluster from project settings (trainer: verl), when one is set. */
  readonly ray?: { readonly address?: string };
  /** Where training metrics go besides metrics.jsonl (project settings' logger:), and the experiment's name; absent: TensorBoard only. */
  readonly tracking?: { readonly logger: readonly Tracker[]; readonly experiment: string };
  readonly inputs: readonly InputNode[];
  /** The experiment's `models:` (stages take a model by name). */
  readonly models: Readonly<Record<string, ModelSpec>>;
  /** The experiment's `rewards:`, formulas with presets expanded. */
  readonly rewards: Readonly<Record<string, string>>;
  /** Empty folder that becomes the node's cache entry when run() returns. */
  readonly outDir: string;
  readonly items: ItemStore;
  readonly signal: AbortSignal;
  log(message: string): void;
  /** How far the node is; shown on its progress line. */
  progress(p: ProgressReport): void;
  /** Said once, before the work, when an earlier attempt of the node finished some of it (kept > 0). */
  resumed(r: { readonly kept: number; readonly total: number; readonly unit: string }): void;
  /** Set when the node was placed on a host (`on:`): it runs in a container there. */
  readonly host?: HostPlacement;
  /** `sandbox: { on: }`: the hosts whose Docker engines run the node's episode jails (the node stays here). */
  readonly sandboxHosts?: readonly SandboxHost[];
  /** `sandbox: { gpus_per_run, cpus_per_run }`: what each episode's jail holds. */
  readonly sandboxRun?: { readonly gpus?: number; readonly cpus?: number };
}

/** A host lending its Docker engine to a node's jails. */
export interface SandboxHost extends EngineSpec {
  readonly name: string;
  /** The GPUs it lends (device ids), 'all' when the engine shares them out, absent when none. */
  readonly gpus?: readonly string[] | 'all';
  /** The CPUs its sandbox runs may use in all; absent when not counted. */
  readonly cpus?: number;
}

/** The host a node runs on, and the GPUs it holds there for the node's lifetime. */
export interface HostPlacement extends EngineSpec {
  readonly name: string;
  readonly image?: string;
  /** Bytes of /dev/shm in the node's container. */
  readonly shmSize?: number;
  /** Where this machine's cache is mounted on the host (inputs and outputs go through it). */
  readonly cacheDir?: string;
  readonly env: Readonly<Record<string, string>>;
  /** Device ids held, or a count where the host does not list them; undefined: no GPUs. */
  readonly gpus?: { readonly ids: readonly string[] } | { readonly count: number };
}

export interface StageResult {
  metrics?: Metrics;
}

export interface KeyContext {
  readonly experimentDir: string;
  readonly models: Readonly<Record<string, ModelSpec>>;
  readonly rewards: Readonly<Record<string, string>>;
}

/** What keyExtras sees besides the check context. */
export interface ExtrasContext extends KeyContext {
  /**
   * The identity of the interpreter the node's Python would run on (the agent
   * environment's lock hash, or another interpreter's path, version and
   * packages), computed once per run. Stages that run Python put it in their
   * extras, so a changed environment rebuilds them and nothing else.
   */
  python(): Promise<PythonIdentity>;
  /** That interpreter's path, for a stage that reads an input with a Python helper to key it (absent: the default one). */
  readonly pythonPath?: string;
}

/**
 * What a node's entry holds for the stages that need it: task folders under
 * tasks/ (tasks), split.json (split), trajectories.jsonl (trajectories), a
 * trained checkpoint (policy), table.json (table), guidance/ (guidance), or anything else (files).
 */
export type Artifact = 'files' | 'tasks' | 'split' | 'trajectories' | 'policy' | 'table' | 'guidance';

/** What flows along `needs:` edges, checked before anything runs. */
export interface StageFlow<P> {
  /** What its entries hold (params decide for some: a shell gives tasks when its outs list them). */
  readonly gives: readonly Artifact[] | ((params: P) => readonly Artifact[]);
  /** What its inputs must give between them, given its params (eval with `tasks:` needs no tasks from them). */
  readonly takes?: (params: P) => readonly Artifact[];
}

/** A problem with one parameter that shows without running; `param` is its path inside `with:`. */
export interface ParamIssue {
  readonly param: readonly (string | number)[];
  readonly message: string;
  /** Other top-level params it follows from (backend: llm without model:); none when only `param` matters. */
  readonly also?: readonly string[];
}

/** A path in `with:` (or `models.NAME.…` for a model), for the position a missing item is reported at. */
type ParamPath = readonly (string | number)[];

/**
 * Something a node needs from this machine before it runs, declared by its stage's `preflight` and checked by
 * the engine (pipelines/preflight.ts) for every node a run would start: a file or folder that must exist, a
 * Python environment mlepipe installs, an HTTP endpoint that must answer, a model the node uses (its weights
 * or its endpoint, checked by the engine as `models:` says), or what the stage found lacking itself.
 */
export type Need = {
  readonly what: string;
  readonly param?: ParamPath;
  readonly why?: string;
  /** The node runs without it, doing less (a competition without data is left out): listed, never refused. */
  readonly optional?: boolean;
} & (
  | { readonly path: string }
  | { readonly env: EnvName }
  | { readonly url: string }
  /** endpoint: called (an openai entry's base_url) or served here (a worker entry); weights: loaded by the node's
   * trainer from its path:; elsewhere: loaded where this machine cannot look (a Ray cluster's file system);
   * unused: named by a param this node's settings leave unused (generate's `model:` under the procedural backend). */
  | { readonly model: string; readonly use: 'endpoint' | 'weights' | 'elsewhere' | 'unused' }
  | { readonly lacking: string }
);

/** What a stage's preflight sees: where relative paths start, the models, the Ray cluster of the settings. */
export interface PreflightContext extends KeyContext {
  readonly ray?: { readonly address?: string };
  /** The node runs on a host (`on:`): what it starts runs in a container there, not on this machine. */
  readonly placed: boolean;
}

/** A count known before a node runs, or only its bound (`atMost`: a filter keeps at most what it reads); undefined: unknown. */
export type Count = { readonly n: number; readonly atMost?: boolean } | undefined;

/** What a node's entry will hold, as far as it shows before the node runs; the plan hands it to the nodes that read it. */
export interface OutputSize {
  readonly tasks?: Count;
  /** A filter's split.json. */
  readonly split?: { readonly train: Count; readonly val: Count };
  readonly trajectories?: Count;
}

/** One amount of a node's work, with its unit and what it is the product of (`12 tasks × 5 policies × 1 repeat`). */
export interface WorkAmount {
  readonly n: Count;
  readonly unit: string;
  readonly of?: string;
}

/** How much work a node is, for the plan: so a user can tell before a run whether it fits the machine. */
export interface WorkSize {
  readonly work: readonly WorkAmount[];
  /** GPUs the node holds while it runs (0: none, it runs on CPUs); absent where the stage cannot tell. */
  readonly gpus?: number;
  /** GPU-hours (unit `GPU-hours`, `of` saying what they bound), where the stage can tell from its hardware and limits. */
  readonly gpuHours?: WorkAmount;
  readonly gives?: OutputSize;
}

/** What a stage's size sees: what each input will hold (from its own size, or its finished entry), and where. */
export interface SizeContext {
  readonly inputs: readonly OutputSize[];
  /** Where relative paths in params start (a `tasks:` folder is counted). */
  readonly experimentDir: string;
  readonly models: Readonly<Record<string, ModelSpec>>;
  /** GPUs a node placed with `on:` holds on its host; absent when it is not placed. */
  readonly placedGpus?: number;
  /** `sandbox: { gpus_per_run: }`: GPUs each episode's jail holds on a sandbox host; absent when none. */
  readonly sandboxGpusPerRun?: number;
}

export interface Stage<P = Record<string, unknown>> {
  readonly kind: string;
  /** Bump when the stage's outputs change for the same params: it is part of every node key. */
  readonly version: number;
  readonly description: string;
  /** Schema of `with:`; defaults in it are filled in before the key is computed. */
  readonly schema: JsonSchema;
  /** Tables the stage publishes in rows.json beyond its metrics (eval: policy, task, win_rate, latency). */
  readonly breakdowns?: readonly string[];
  /**
   * The params a node runs with, from those written (schema defaults filled): presets expanded into the
   * values they stand for, before the key is computed. A node that names no preset keeps the params,
   * and so the key, it had before the preset existed. `inputKinds` are the stage kinds of the node's
   * inputs, for defaults that depend on what the node reads (an eval of MLE-bench competitions).
   */
  resolve?(
    params: Readonly<Record<string, unknown>>,
    ctx: { readonly inputKinds: readonly string[] },
  ): Record<string, unknown>;
  /** Top-level params that do not change the output (concurrency): left out of the node key. */
  readonly keyIgnore?: readonly string[];
  /** What it gives to, and needs from, the stages joined to it by `needs:`. */
  readonly flow: StageFlow<P>;
  /**
   * Every problem with params that shows without running (a missing file, an
   * unknown seed set, options that exclude each other), not just the first:
   * validation reports them all, positioned; the schema has passed already.
   */
  check?(params: P, ctx: KeyContext): ParamIssue[];
  /**
   * What a node needs before it runs beyond the models its `x-ref: model|policy` params name (the engine
   * derives those): paths its params name, Python environments, a Ray cluster. A need for a model param
   * the engine also derives replaces the derived one (a verl policy is loaded as weights, not called).
   * Fast and offline: the engine checks the list, probes the endpoints, and reports what is missing.
   */
  preflight?(params: P, ctx: PreflightContext): Need[];
  /** Anything besides params that changes the output (hashes of dependency files, image digests). */
  keyExtras?(params: P, ctx: ExtrasContext): Promise<unknown>;
  /**
   * Episodes whose jails a node holds open at once at most (its concurrency): with `sandbox: { on:,
   * gpus_per_run: }`, the node takes that many runs' GPUs from its hosts when it starts. Stages that
   * take `sandbox:` say it.
   */
  sandboxRuns?(params: P): number;
  /**
   * How much work a node is (episodes, rollouts, examples × epochs, GPU-hours where it can bound them), from
   * its params and what its inputs will hold; `undefined` counts where that shows only once the inputs exist.
   * Optional: the plan shows nothing for a stage without it.
   */
  size?(params: P, ctx: SizeContext): WorkSize;
  /** Where a node runs when the stage sends it elsewhere itself (a Ray job), in a few words for the plan. */
  placement?(params: P): string | undefined;
  run(ctx: StageContext<P>): Promise<StageResult | void>;
  /**
   * Params read only after the work is done (eval's reward: a function of the recorded runs). A node
   * that differs from a finished one in these alone is rebuilt from that entry's outputs by `run`, under
   * its own key, instead of doing the work again (docs/cache.md). Extras fields of the same names are
   * left out of the comparison too.
   */
  readonly rescore?: {
    readonly params: readonly (keyof P & string)[];
    run(ctx: StageContext<P>, from: RescoreSource): Promise<StageResult | void>;
  };
}

/** The finished entry a node is rescored from. */
export interface RescoreSource {
  readonly key: string;
  /** Its folder in the cache (read-only). */
  readonly dir: string;
  readonly metrics: Readonly<Metrics>;
}
