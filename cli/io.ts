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
  const out = writer(process.stdout);
  const err = writer(process.stderr);
  return {
    out: (t) => out(t.endsWith('\n') ? t : t + '\n'),
    err: (t) => err(t.endsWith('\n') ? t : t + '\n'),
    interactive: !!process.stderr.isTTY && !process.env.CI,
    env: process.env,
    signal,
  };
}

/**
 * Writes to a stream whose reader may go away (`mlepipe plan … | head`): the
 * closed pipe's EPIPE ends the output quietly instead of crashing with a
 * trace; the command still finishes (no finished work is lost) and exits with
 * its usual code.
 */
function writer(stream: NodeJS.WriteStream): (text: string) => void {
  let closed = false;
  stream.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE' && e.code !== 'ERR_STREAM_DESTROYED') throw e;
    closed = true;
  });
  return (text) => {
    if (!closed && !stream.destroyed) stream.write(text);
  };
}

/** Captures output in memory (for tests calling commands directly). */
export function memoryIO(env: NodeJS.ProcessEnv = process.env): IO & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { stdout, stderr, out: (t) => stdout.push(t), err: (t) => stderr.push(t), interactive: false, env };
}
