// The mlepipe entry: the program and the one catch. Each group of commands registers itself from
// ./program; the commands live in ./commands and are loaded on demand so that a cached rerun starts fast.
import { Command, CommanderError } from 'commander';
import { ExitError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import type { IO } from './io.js';
import { registerCacheCommands } from './program/cache.js';
import { registerExperimentCommands } from './program/experiment.js';
import { registerMachineCommands } from './program/machine.js';
import type { Registrar } from './program/options.js';
import { registerResultCommands } from './program/results.js';
import { registerSandboxCommands } from './program/sandbox.js';
import { registerTaskCommands, registerToolCommands } from './program/tasks.js';

export function buildProgram(io: IO, done: (code: number) => void): Command {
  const program = new Command('mlepipe')
    .description('Experiment YAML → validated, cached DAG of ML-agent research stages')
    .version(VERSION)
    .showHelpAfterError('(mlepipe --help lists the commands)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  const registrar: Registrar = {
    act:
      (fn) =>
      async (...a) =>
        done(await fn(...a)),
  };
  // In the order `mlepipe --help` lists them.
  for (const register of [
    registerExperimentCommands,
    registerResultCommands,
    registerCacheCommands,
    registerSandboxCommands,
    registerToolCommands,
    registerTaskCommands,
    registerMachineCommands,
  ])
    register(program, registrar, io);
  return program;
}

/** Parses argv, runs the command, and maps every outcome to an exit code. */
export async function main(argv: string[], io: IO): Promise<number> {
  let code = 0;
  const program = buildProgram(io, (c) => (code = c));
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version exit 0; any other parsing problem is invalid input.
      return err.exitCode === 0 ? 0 : 2;
    }
    if (err instanceof ExitError) {
      io.err(err.message);
      return err.exitCode;
    }
    io.err(
      `mlepipe: internal error (please report it):\n${err instanceof Error ? (err.stack ?? err.message) : String(err)}`,
    );
    return 1;
  }
}
