// The commands about tasks and what agents do with them: task folders, the diagnostic tools, reward formulas.
import type { Command } from 'commander';
import type { IO } from '../io.js';
import { collect, type Registrar } from './options.js';

export function registerTaskCommands(program: Command, { act }: Registrar, io: IO): void {
  const task = program.command('task').description('inspect and import task folders');
  task
    .command('show')
    .description(
      "a task's kind, metric, thresholds, files and its sample submission's score; for a folder of tasks, its tasks",
    )
    .argument('<dir>')
    .option('--json', 'JSON output')
    .action(
      act(async (dir: string, o: { json?: boolean }) =>
        (await import('../commands/task.js')).taskShowCommand(dir, o, io),
      ),
    );
  task
    .command('import-sandmle')
    .description(
      'convert released SandMLE tasks (<id>/prepared/public/ with evaluator.py and answer.csv) to task folders',
    )
    .argument('<src>')
    .argument('<dest>')
    .action(
      act(async (src: string, dest: string) => (await import('../commands/task.js')).taskImportCommand(src, dest, io)),
    );

  program
    .command('reward')
    .description(
      'evaluate a reward formula or preset, e.g. mlepipe reward sandmle-paper --vars format=1,execute=1,median=1',
    )
    .argument('[formula]')
    .option('--vars <list>', 'NAME=VALUE,… (unset variables are 0)')
    .option('--list', 'list presets and variables')
    .action(
      act(async (f: string | undefined, o: { vars?: string; list?: boolean }) =>
        (await import('../commands/reward.js')).rewardCommand(f, o, io),
      ),
    );
}

export function registerToolCommands(program: Command, { act }: Registrar, io: IO): void {
  const tools = program.command('tools').description('diagnostic tools agents call (docs/tools.md)');
  tools
    .command('list')
    .description('the registered tools: name, domain, what each returns and its required arguments')
    .option('--domain <d>', 'shared | tabular | time-series (time_series) | nlp | vision (cv) | graph')
    .option('--json', "JSON output, with each tool's argument schema")
    .action(
      act(async (o: { domain?: string; json?: boolean }) =>
        (await import('../commands/tools.js')).toolsListCommand(o, io),
      ),
    );
  tools
    .command('run')
    .description(
      "run one tool in a fresh sandbox workspace next to a task's public/ files; prints what the agent would read",
    )
    .argument('<name>')
    .requiredOption('--task <dir>', 'task folder (only its public/ is visible)')
    .option('--arg <name=value>', 'a tool argument (lists comma-separated); repeatable', collect, [])
    .option('--file <path>', 'copy a file (a script, a log) into the workspace first; repeatable', collect, [])
    .option('--timeout <seconds>', 'wall clock limit of the call (default 60)')
    .option('--json', 'the whole answer: text, evidence, ok')
    .action(
      act(async (name: string, o: { task: string; arg: string[]; file: string[]; timeout?: string; json?: boolean }) =>
        (await import('../commands/tools.js')).toolsRunCommand(name, o, io),
      ),
    );
}
