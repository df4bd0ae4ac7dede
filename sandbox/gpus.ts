// GPUs for sandbox runs on a host: each run's jail holds `perRun` of the
// host's GPUs for as long as it lives, so that runs side by side never share
// a device, and a host holds at most as many runs as it has GPUs for. A host
// whose GPUs are not counted (`gpus: all`) lets the engine share them out.

/** What a container asks the engine for: a count, every GPU, or these device ids. */
export type GpuRequest = number | 'all' | readonly string[];

export class GpuLender {
  private readonly free: string[] | undefined;
  /** Runs the host can hold at once. */
  readonly slots: number;

  constructor(
    ids: readonly string[] | 'all',
    private readonly perRun: number,
  ) {
    this.free = ids === 'all' ? undefined : [...ids];
    this.slots = this.free ? Math.floor(this.free.length / perRun) : Infinity;
  }

  /** GPUs for one run, or undefined when too few are free. */
  take(): GpuRequest | undefined {
    if (!this.free) return this.perRun;
    if (this.free.length < this.perRun) return undefined;
    return this.free.splice(0, this.perRun);
  }

  give(lease: GpuRequest): void {
    if (this.free && Array.isArray(lease)) this.free.push(...(lease as string[]));
  }
}

/**
 * The GPUs one container holds: from the lender when there is one (released once, however often `release`
 * is called), else the fixed request. Throws when the lender has none free.
 */
export function holdGpus(
  lender: GpuLender | undefined,
  fixed: number | 'all' | undefined,
  noneFree: () => Error,
): { gpus: GpuRequest | undefined; release(): void } {
  if (!lender) return { gpus: fixed, release: () => {} };
  const gpus = lender.take();
  if (gpus === undefined) throw noneFree();
  let held = true;
  return {
    gpus,
    release() {
      if (held) lender.give(gpus);
      held = false;
    },
  };
}
