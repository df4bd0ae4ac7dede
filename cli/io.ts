// What a command may touch of the outside world; tests pass their own.
export interface IO {
  out(text: string): void;
  err(text: string): void;
  /** Live terminal display allowed (a TTY and not CI). */
  interactive: boolean;
  env: NodeJS.ProcessEnv;
  signal?: AbortSignal;
}

export function processIO(signal?: AbortSignal): IO {
  return {
    out: (t) => process.stdout.write(t.endsWith('\n') ? t : t + '\n'),
    err: (t) => process.stderr.write(t.endsWith('\n') ? t : t + '\n'),
    interactive: !!process.stderr.isTTY && !process.env.CI,
    env: process.env,
    signal,
  };
}

/** Captures output in memory (for tests calling commands directly). */
export function memoryIO(env: NodeJS.ProcessEnv = process.env): IO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), interactive: false, env };
}
