// The commands that read an experiment file and check, plan or run it.
import type { Command } from 'commander';
import type { IO } from '../io.js';
import { setOption, type Registrar } from './options.js';

export function registerExperimentCommands(program: Command, { act }: Registrar, io: IO): void {
  program
    .command('validate')
    .description('check experiment files; every error at once as FILE:LINE:COL: path: message')
    .argument('<files...>')
    .addOption(setOption())
    .action(
      act(async (files: string[], o: { set: string[] }) =>
        (await import('../commands/validate.js')).validateCommand(files, o, io),
      ),
    );

  program
    .command('plan')
    .description('show each node as run or cached, with the reason')
    .argument('<file>')
    .addOption(setOption())
    .option('--json', 'machine-readable output')
    .option('--force [node]', 'treat all nodes (or NODE) as stale, to rerun from scratch')
    .option('--rebuild [node]', 'treat all nodes (or NODE) as stale, to rerun keeping their finished items')
    .option('--only <node>', 'only NODE and what it needs')
    .option('--check', 'exit 3 when a node to run lacks something (weights, data, an endpoint, a host, an environment)')
    .action(
      act(
        async (
          file: string,
          o: {
            set: string[];
            json?: boolean;
            force?: boolean | string;
            rebuild?: boolean | string;
            only?: string;
            check?: boolean;
          },
        ) => (await import('../commands/plan.js')).planCommand(file, o, io),
      ),
    );

  program
    .command('run')
    .description('run every node that is not cached')
    .argument('<file>')
    .addOption(setOption())
    .option('-j, --jobs <n>', 'nodes at once (default: settings, else 2)')
    .option('--force [node]', 'rerun all nodes, or only NODE (a stage name or node id), from scratch: every item again')
    .option(
      '--rebuild [node]',
      'rerun all nodes (or NODE) but keep the items an earlier attempt finished (episodes, tasks, steps): only missing ones run',
    )
    .option('--only <node>', 'run only NODE and what it needs')
    .option('--keep-going', 'after a failure, skip only what depends on it')
    .option('--no-preflight', 'start even when a node to run lacks what plan lists as missing')
    .action(
      act(
        async (
          file: string,
          o: {
            set: string[];
            jobs?: string;
            force?: boolean | string;
            rebuild?: boolean | string;
            only?: string;
            keepGoing?: boolean;
            preflight?: boolean;
          },
        ) => (await import('../commands/run.js')).runCommand(file, o, io),
      ),
    );

  program
    .command('status')
    .description('exit 1 when any node is stale')
    .argument('<file>')
    .addOption(setOption())
    .action(
      act(async (file: string, o: { set: string[] }) =>
        (await import('../commands/status.js')).statusCommand(file, o, io),
      ),
    );
}
