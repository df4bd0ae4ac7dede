import { basename, resolve } from 'node:path';
import { stat } from 'node:fs/promises';
import { UserError } from '../../core/errors.js';
import { defaultPython } from '../../core/python.js';
import { loadSettings } from '../../pipelines/config/settings.js';
import { gradeSubmission } from '../../sandbox/evaluate.js';
import { createSandbox, DEFAULT_LIMITS, type BackendName } from '../../sandbox/index.js';
import { copyIn } from '../../sandbox/workspace.js';
import { positiveFlag } from '../flags.js';
import type { IO } from '../io.js';

export interface SandboxRunArgs {
  task: string;
  backend?: string;
  timeout?: string;
  memoryMb?: string;
  warm?: boolean;
  grade?: boolean;
}

const BACKENDS: BackendName[] = ['bwrap', 'docker', 'process'];

/**
 * The sandbox the settings (mlepipe.config.yaml and the environment) describe, with --backend and --warm
 * over them, and the interpreter it maps into the jail (as stages do). The process backend, which
 * isolates nothing, runs only when asked for by name.
 */
export async function sandboxFromSettings(
  args: { backend?: string; warm?: boolean },
  io: IO,
  extra: { poolSize?: number } = {},
) {
  if (args.backend && !BACKENDS.includes(args.backend as BackendName)) {
    throw new UserError(`--backend ${args.backend}: must be one of ${BACKENDS.join(', ')}`);
  }
  const settings = await loadSettings(process.cwd(), io.env);
  const python = defaultPython(settings.python);
  const sandbox = createSandbox({
    backend: (args.backend as BackendName | undefined) ?? settings.sandbox.backend,
    python,
    modules: settings.sandbox.preload,
    image: settings.sandbox.image,
    warm: args.warm,
    ...extra,
    explicit: args.backend === 'process' || (!args.backend && settings.sandbox.backend === 'process'),
    warn: (m) => io.err(`mlepipe: warning: ${m}`),
  });
  return { sandbox, python };
}

/**
 * `mlepipe sandbox run --task DIR [--backend B] [--timeout S] [--memory-mb M] FILE.py [ARGS…]`:
 * runs the script in a fresh workspace and prints one JSON object.
 */
export async function sandboxRunCommand(argv: string[], args: SandboxRunArgs, io: IO): Promise<number> {
  // `-- python FILE` is accepted as well as `FILE`.
  const rest = /^python3?$/.test(basename(argv[0] ?? '')) ? argv.slice(1) : argv;
  const file = rest[0];
  if (!file) throw new UserError('sandbox run: name the Python file to run');
  if (!(await stat(file).catch(() => null))?.isFile()) throw new UserError(`${file}: no such file`);
  const timeout = positiveFlag('--timeout', args.timeout);
  const memoryMb = positiveFlag('--memory-mb', args.memoryMb);
  // One session: its jail starts on demand, no spare.
  const { sandbox, python } = await sandboxFromSettings(args, io, { poolSize: 0 });
  const limits = {
    ...DEFAULT_LIMITS,
    ...(timeout ? { timeoutMs: timeout * 1000 } : {}),
    ...(memoryMb ? { memoryMb } : {}),
  };
  const session = await sandbox.open({ task: resolve(args.task), limits, signal: io.signal });
  try {
    const name = basename(file);
    await copyIn(file, session.workspace, name);
    const result = await session.run({ file: name, args: rest.slice(1) });
    const grade =
      args.grade && !result.interrupted
        ? await gradeSubmission(resolve(args.task), session.workspace, { python, signal: io.signal })
        : undefined;
    io.out(JSON.stringify({ ...result, ...(grade ? { grade } : {}) }));
    return 0;
  } finally {
    await session.close();
    await sandbox.shutdown();
  }
}
