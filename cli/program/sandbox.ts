// `mlepipe sandbox run|serve`: untrusted Python run the way agent steps run, by hand or for verl.
import type { Command } from 'commander';
import type { SandboxServeArgs } from '../commands/sandbox-serve.js';
import type { IO } from '../io.js';
import type { Registrar } from './options.js';

export function registerSandboxCommands(program: Command, { act }: Registrar, io: IO): void {
  const sandbox = program.command('sandbox').description('run untrusted Python the way agent steps run');
  sandbox
    .command('run')
    .description("run FILE.py in a fresh workspace next to a task's public/ files; prints one JSON object")
    .requiredOption('--task <dir>', 'task folder (only its public/ is visible)')
    .option('--backend <name>', 'bwrap | docker | process (default: settings, else bwrap)')
    .option('--timeout <seconds>', 'wall clock limit (default 90)')
    .option('--memory-mb <mb>', 'memory cap (default 2048)')
    .option('--warm', 'use a warm executor (numpy, pandas, sklearn already imported)')
    .option('--grade', "then grade submission.csv with the task's private evaluator (outside the jail)")
    .argument('<file...>', 'FILE.py [ARGS…] (or: -- python FILE.py)')
    .action(
      act(
        async (
          file: string[],
          o: { task: string; backend?: string; timeout?: string; memoryMb?: string; warm?: boolean; grade?: boolean },
        ) => (await import('../commands/sandbox.js')).sandboxRunCommand(file, o, io),
      ),
    );

  sandbox
    .command('serve')
    .description("serve sandbox sessions and grading over HTTP to a verl export's agent loop and reward function")
    .option('--export <dir>', "a verl export (a grpo node's verl/ folder): its tasks/ and sandbox.json")
    .option('--tasks <dir>', 'a folder of tasks (instead of --export)')
    .option('--reward <formula>', 'a reward formula or preset (with --tasks)')
    .option('--host <host>', 'address to listen on (default 127.0.0.1; 0.0.0.0 for Ray workers on other hosts)')
    .option('--port <port>', 'port (default: a free one)')
    .option('--backend <name>', 'bwrap | docker | process (default: settings, else bwrap)')
    .option('--memory-mb <mb>', "memory cap of a step (default: the export's)")
    .option('--warm', 'use warm executors')
    .option('--on <label>', "run the jails on the settings' hosts with this name or label (docs/hosts.md)")
    .option('--gpus-per-run <n>', 'with --on: GPUs each jail holds (default 1 where those hosts lend GPUs)')
    .option('--cpus-per-run <n>', 'with --on: CPUs each jail holds')
    .action(
      act(async (o: SandboxServeArgs) => (await import('../commands/sandbox-serve.js')).sandboxServeCommand(o, io)),
    );
}
