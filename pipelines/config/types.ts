// The two shapes of an experiment and of the settings: what the user wrote (loose, optional everywhere, checked
// against the schemas in written-check.ts) and the resolved, read-only form the compiler works from.
import type { ModelSpec, WrittenModel } from '../../core/models.js';
import type { EngineSpec } from '../../sandbox/hosts.js';
import type { Origins } from '../../core/source.js';
import type { Diagnostic } from '../../core/errors.js';
import type { ReferenceCell, ReferenceTable } from '../../core/references.js';
import type { Tracker } from '../../stages/contract.js';

export type { ModelSpec, WrittenModel };

/** A `stages:` entry as written. */
export interface WrittenStage {
  /** Stage kind: shell, ablate, generate, mlebench, filter, eval, grpo or sft. */
  uses: string;
  /** Stages whose outputs this one reads. */
  needs?: string[];
  /** Parameters, validated by the kind's schema under schemas/stages/. */
  with?: Record<string, unknown>;
  /** ablate only: the stage to vary. */
  target?: string;
  /** ablate only: paths inside the target's `with:` → values to try. */
  matrix?: Record<string, unknown[]>;
  /** Placement: a host name or label (mlepipe.config hosts). */
  on?: string;
  /** GPUs taken on the host (default 1 with `on:`). */
  gpus?: number;
  /** With `on:`: tries again after a host fault. */
  retries?: number;
  /** eval and grpo: the episodes' jails run as containers on these hosts' engines. */
  /** null: this machine's sandbox, as when left out (so `-S stages.ID.sandbox=null` undoes a file's hosts). */
  sandbox?: { on: string; gpus_per_run?: number; cpus_per_run?: number } | null;
  description?: string;
}

export type { ReferenceTable };

/** A `reference:` written out: a built-in (`use:`) or the numbers themselves, with how their rows join ours. */
export interface WrittenReference {
  use?: string;
  source?: string;
  keys?: string[];
  columns?: string[];
  rows?: Array<Record<string, ReferenceCell>>;
  /** The paper's row label → our row's key. */
  join?: Record<string, string>;
  /** Our columns that make a row's key. */
  on?: string | string[];
  /** The paper's column → ours. */
  compare?: Record<string, string>;
  /** NAME → a formula over our row keys, computed for both sides. */
  derived?: Record<string, string>;
}

/** A reference as the report uses it: the paper's table and how it joins ours, defaults filled in. */
export interface ResolvedReference {
  readonly table: ReferenceTable;
  /** The paper's row label → our row key; absent: a row joins the row of ours whose key is its label. */
  readonly join?: Readonly<Record<string, string>>;
  /** Our key columns; absent: the table's label columns (a figure's x). */
  readonly on?: readonly string[];
  /** The paper's column → ours, for every value column of the paper's. */
  readonly compare: Readonly<Record<string, string>>;
  readonly derived: Readonly<Record<string, string>>;
}

/** A `tables:` entry: rows from the nodes of one stage (or a breakdown they publish), columns from their metrics. */
export interface WrittenTable {
  from: string;
  /** variant | node | a breakdown the stage publishes (eval: policy, task, win_rate, latency). */
  rows?: string;
  columns?: string[];
  interval?: 'ci' | 'sem' | 'none';
  /** A built-in reference name, or a reference with its join written out. */
  reference?: string | WrittenReference;
  description?: string;
}

/** A `figures:` entry: an SVG chart of a table's rows. */
export interface WrittenFigure {
  from: string;
  rows?: string;
  kind?: 'bar' | 'line' | 'point' | 'box' | 'heatmap';
  x: string;
  y: string;
  color?: string;
  interval?: boolean;
  title?: string;
  log_y?: boolean;
  split?: boolean;
  reference?: string | WrittenReference;
}

export interface WrittenExperiment {
  name: string;
  description?: string;
  extends?: string | string[];
  vars?: Record<string, unknown>;
  models?: Record<string, WrittenModel>;
  rewards?: Record<string, string>;
  stages: Record<string, WrittenStage>;
  tables?: Record<string, WrittenTable>;
  figures?: Record<string, WrittenFigure>;
}

/** A `hosts:` entry as written: a Docker engine nodes can be placed on. */
export interface WrittenHost {
  /** unix:///PATH.sock, tcp://HOST:PORT or ssh://USER@HOST[:PORT]. */
  docker: string;
  /** A count, device ids, or 'all' (no accounting). Absent: the host lends no GPUs. */
  gpus?: number | string[] | 'all';
  /** CPUs sandbox runs may use there in all (absent: not counted). */
  cpus?: number;
  labels?: string[];
  image?: string;
  env?: Record<string, string | number | boolean>;
  /** ssh: the private key file; without it the agent's keys. */
  identity?: string;
  /** ssh: the known_hosts file (default ~/.ssh/known_hosts). */
  known_hosts?: string;
  /** tcp: TLS files. */
  tls?: { ca: string; cert: string; key: string };
  /** /dev/shm of the host's containers: bytes or a size like 16g. */
  shm_size?: number | string;
  /** Where this machine's cache is mounted on the host, when it is. */
  cache_dir?: string;
}

export interface SandboxSettings {
  readonly backend: 'bwrap' | 'docker' | 'process';
  readonly image?: string;
  /** Modules warm executors import before forking steps (undefined: the sandbox's default list). */
  readonly preload?: readonly string[];
}

/** Project settings as written in mlepipe.config.*. */
export interface WrittenSettings {
  cache?: string;
  python?: string;
  sandbox?: { backend?: 'bwrap' | 'docker' | 'process'; image?: string; preload?: string[] };
  concurrency?: number;
  hosts?: Record<string, WrittenHost>;
  ray?: { address?: string };
  logger?: Tracker[];
}

/**
 * A host as the engine works from it: key and certificate paths absolute, the GPUs it lends as device ids (a count
 * written as ids 0 to N-1), and the size of /dev/shm in bytes.
 */
export interface ResolvedHost extends EngineSpec {
  /** The GPUs as written, for showing them as the user did (a count, device ids, or 'all'). */
  readonly gpus?: number | readonly string[] | 'all';
  /** The device ids it lends; 'all': the engine shares them out, uncounted; absent: it declares none. */
  readonly gpuIds?: readonly string[] | 'all';
  readonly cpus?: number;
  readonly labels?: readonly string[];
  readonly image?: string;
  readonly env?: Readonly<Record<string, string | number | boolean>>;
  /** Bytes of /dev/shm in its containers. */
  readonly shmSize?: number;
  readonly cache_dir?: string;
}

export interface Settings {
  /** The settings file, when one was found. */
  readonly file?: string;
  readonly projectRoot: string;
  readonly cacheDir: string;
  readonly python?: string;
  readonly sandbox: SandboxSettings;
  readonly concurrency: number;
  readonly hosts: Readonly<Record<string, ResolvedHost>>;
  /** The Ray cluster `trainer: verl` nodes submit to when their stage names none. */
  readonly ray: { readonly address?: string };
  /** Training-metrics trackers; TensorBoard is always among them. */
  readonly logger: readonly Tracker[];
}

export interface ResolvedStage {
  readonly id: string;
  readonly uses: string;
  readonly needs: readonly string[];
  /** `with:` after schema defaults were filled in. */
  readonly params: Readonly<Record<string, unknown>>;
  readonly target?: string;
  readonly matrix?: Readonly<Record<string, readonly unknown[]>>;
  readonly on?: string;
  /** GPUs taken on the host: 0 without `on:`. */
  readonly gpus: number;
  /** Further tries after a host fault (0 without `on:`). */
  readonly retries: number;
  /** `sandbox: { on: }`: the label and the hosts carrying it, whose engines run the episodes' jails. */
  readonly sandbox?: {
    readonly on: string;
    readonly hosts: readonly string[];
    readonly gpusPerRun?: number;
    readonly cpusPerRun?: number;
  };
  readonly description?: string;
}

export interface ResolvedTable {
  readonly from: string;
  readonly rows: string;
  readonly columns?: readonly string[];
  readonly interval: 'ci' | 'sem' | 'none';
  readonly reference?: ResolvedReference;
  readonly description?: string;
}

export interface ResolvedFigure {
  readonly from: string;
  readonly rows: string;
  readonly kind: 'bar' | 'line' | 'point' | 'box' | 'heatmap';
  readonly x: string;
  readonly y: string;
  readonly color?: string;
  readonly interval: boolean;
  readonly title?: string;
  readonly logY: boolean;
  /** Line figures: one line per variant where variants share x values. */
  readonly split: boolean;
  readonly reference?: ResolvedReference;
}

/** What the compiler sees: validated, interpolated, defaults applied. */
export interface Experiment {
  readonly name: string;
  readonly description?: string;
  readonly file: string;
  readonly settings: Settings;
  readonly vars: Readonly<Record<string, unknown>>;
  /** Resolved: one shape a provider, defaults filled in. */
  readonly models: Readonly<Record<string, ModelSpec>>;
  /** Reward name → formula text (presets already expanded). */
  readonly rewards: Readonly<Record<string, string>>;
  /** In declaration order. */
  readonly stages: readonly ResolvedStage[];
  readonly tables: Readonly<Record<string, ResolvedTable>>;
  readonly figures: Readonly<Record<string, ResolvedFigure>>;
  /**
   * The document as written: `extends` merged and `-S` applied, before interpolation and defaults, so
   * that `diff` can show the change a user made (`vars.n`) beside what it resolved to. `origins` says
   * where each of its values was written.
   */
  readonly written: Readonly<Record<string, unknown>>;
  readonly origins: Origins;
  /**
   * What loads but cannot run here as written: a sandbox label no host carries. validate and plan print
   * them; run refuses the nodes they concern before anything starts.
   */
  readonly warnings: readonly Diagnostic[];
}
