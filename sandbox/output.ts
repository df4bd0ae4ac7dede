// Keeps the first `max` bytes of a stream and counts the rest, so a step that
// prints 200 MB costs nothing but the drain.
export class CappedOutput {
  private chunks: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly max: number) {}

  push(chunk: Buffer): void {
    const room = this.max - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    if (chunk.length > room) this.dropped += chunk.length - Math.max(0, room);
  }

  get truncated(): boolean {
    return this.dropped > 0;
  }

  text(): string {
    const s = Buffer.concat(this.chunks).toString('utf8');
    return this.truncated ? `${s}\n[mlepipe: output truncated, ${this.dropped} more bytes]` : s;
  }
}

/** Thread pools of the numeric libraries, pinned to the step's CPU share. */
export function threadEnv(cpus: number): Record<string, string> {
  const n = String(Math.max(1, Math.floor(cpus)));
  return {
    OMP_NUM_THREADS: n,
    OPENBLAS_NUM_THREADS: n,
    MKL_NUM_THREADS: n,
    NUMEXPR_NUM_THREADS: n,
    VECLIB_MAXIMUM_THREADS: n,
    BLIS_NUM_THREADS: n,
  };
}

/** The only PATH inside a jail. */
export const JAIL_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The whole environment a jailed step sees: nothing of the host's (no API keys, no paths). */
export function jailEnv(cpus: number, home: string): Record<string, string> {
  return {
    PATH: JAIL_PATH,
    HOME: home,
    USER: 'nobody',
    LANG: 'C.UTF-8',
    PYTHONUNBUFFERED: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    MPLCONFIGDIR: '/tmp',
    // joblib counts physical cores through /sys, which jails do not show; it would warn on every step.
    LOKY_MAX_CPU_COUNT: String(Math.max(1, Math.floor(cpus))),
    ...threadEnv(cpus),
  };
}
