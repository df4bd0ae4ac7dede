// A command in its own process group, so that a timeout or a stopping node takes down everything it started;
// it starts once the group is held (core/reaper.ts), and once the command itself exits its whole group goes,
// since background processes it left behind would hold its output open forever. Used by the shell stage's
// command and the harness stage's runs.
import { killGroupNow, killTree, onceAborted } from '../../core/proc.js';
import { gated, reapGroup } from '../../core/reaper.js';

export interface GroupExit {
  exitCode: number | undefined;
  signal: string | undefined;
  /** Stopped at `timeoutMs`. */
  timedOut: boolean;
}

export async function runInGroup(
  argv: readonly string[],
  opts: {
    cwd: string;
    env: Record<string, string>;
    /** false: `env` is the whole environment. */
    extendEnv?: boolean;
    timeoutMs?: number;
    signal: AbortSignal;
    /** Each line of its stdout and stderr, interleaved. */
    onLine: (line: string) => void;
  },
): Promise<GroupExit> {
  const [gate, ...rest] = gated(argv);
  // Loaded here: the harness stage's adapters import this module, and plan or validate must not load execa.
  const { execa } = await import('execa');
  const child = execa(gate!, rest, {
    cwd: opts.cwd,
    env: opts.env,
    extendEnv: opts.extendEnv ?? true,
    detached: true,
    reject: false,
    stdin: 'pipe',
    all: true,
    buffer: false,
  });
  const held = reapGroup(child);
  const lines = async () => {
    for await (const line of child.iterable({ from: 'all' })) opts.onLine(String(line));
  };
  let timedOut = false;
  const timer = opts.timeoutMs
    ? setTimeout(() => {
        timedOut = true;
        killTree(child.pid);
      }, opts.timeoutMs)
    : undefined;
  const stopAbort = onceAborted(opts.signal, () => killTree(child.pid));
  child.once('exit', () => {
    killGroupNow(child.pid);
    void held.then((release) => release());
  });
  const [result] = await Promise.all([child, lines()]);
  clearTimeout(timer);
  stopAbort();
  return { exitCode: result.exitCode, signal: result.signal, timedOut };
}
