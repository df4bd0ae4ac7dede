// The mlepipe entry: argument parsing and the one catch. Commands live in
// ./commands and are loaded on demand so that a cached rerun starts fast.
import { Command, CommanderError, Option } from 'commander';
import { ExitError } from '../core/errors.js';
import { VERSION } from '../core/version.js';
import { processIO, type IO } from './io.js';
import type { SandboxServeArgs } from './commands/sandbox-serve.js';

const collect = (v: string, acc: string[]) => [...acc, v];
const setOption = (what = 'any key of the experiment, or hosts.NAME.KEY of the settings') =>
  new Option('-S, --set <key=value>', `override ${what} (value parsed as YAML); repeatable`)
    .argParser(collect)
    .default([]);

export function buildProgram(io: IO, done: (code: number) => void): Command {
  const program = new Command('mlepipe')
    .description('Experiment YAML → validated, cached DAG of ML-agent research stages')
    .version(VERSION)
    .showHelpAfterError('(mlepipe --help lists the commands)')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  const act =
    <A extends unknown[]>(fn: (...a: A) => Promise<number>) =>
    async (...a: A) =>
      done(await fn(...a));

  program
    .command('validate')
    .description('check experiment files; every error at once as FILE:LINE:COL: path: message')
    .argument('<files...>')
    .addOption(setOption())
    .action(
      act(async (files: string[], o: { set: string[] }) =>
        (await import('./commands/validate.js')).validateCommand(files, o, io),
      ),
    );

  program
    .command('plan')
    .description('show each node as run or cached, with the reason')
    .argument('<file>')
    .addOption(setOption())
    .option('--json', 'machine-readable output')
    .option('--force [node]', 'treat all nodes (or NODE) as stale')
    .option('--only <node>', 'only NODE and what it needs')
    .action(
      act(async (file: string, o: { set: string[]; json?: boolean; force?: boolean | string; only?: string }) =>
        (await import('./commands/plan.js')).planCommand(file, o, io),
      ),
    );

  program
    .command('run')
    .description('run every node that is not cached')
    .argument('<file>')
    .addOption(setOption())
    .option('-j, --jobs <n>', 'nodes at once (default: settings, else 2)')
    .option('--force [node]', 'rerun all nodes, or only NODE (a stage name or node id)')
    .option('--only <node>', 'run only NODE and what it needs')
    .option('--keep-going', 'after a failure, skip only what depends on it')
    .action(
      act(
        async (
          file: string,
          o: { set: string[]; jobs?: string; force?: boolean | string; only?: string; keepGoing?: boolean },
        ) => (await import('./commands/run.js')).runCommand(file, o, io),
      ),
    );

  program
    .command('status')
    .description('exit 1 when any node is stale')
    .argument('<file>')
    .addOption(setOption())
    .action(
      act(async (file: string, o: { set: string[] }) =>
        (await import('./commands/status.js')).statusCommand(file, o, io),
      ),
    );

  program
    .command('diff')
    .description('parameters that differ, nodes they touch, metrics side by side')
    .argument('<a>')
    .argument('<b>')
    .option('--json', 'JSON output')
    .option('--md', 'Markdown output')
    .addOption(setOption().default([]))
    .action(
      act(async (a: string, b: string, o: { json?: boolean; md?: boolean; set: string[] }) =>
        (await import('./commands/diff.js')).diffCommand(
          a,
          b,
          { format: o.json ? 'json' : o.md ? 'md' : 'text', set: o.set },
          io,
        ),
      ),
    );

  program
    .command('report')
    .description("render the experiment's tables from node metrics")
    .argument('<file>')
    .addOption(setOption())
    .option('--md', 'Markdown')
    .option('--csv', 'CSV')
    .option('--json', 'JSON: {"tables": {NAME: {"columns": [...], "rows": [...]}}}')
    .option('--html', 'one HTML page with tables, figures, curves and a trajectory browser (prints its path)')
    .option('--out <dir>', 'with --html: the folder to write it into (default reports/<experiment>/html)')
    .action(
      act(
        async (
          file: string,
          o: { set: string[]; md?: boolean; csv?: boolean; json?: boolean; html?: boolean; out?: string },
        ) =>
          (await import('./commands/report.js')).reportCommand(
            file,
            { set: o.set, format: o.json ? 'json' : o.csv ? 'csv' : o.md ? 'md' : 'text', html: o.html, out: o.out },
            io,
          ),
      ),
    );

  program
    .command('outputs')
    .description("print the cache folder with NODE's outputs")
    .argument('<file>')
    .argument('<node>')
    .addOption(setOption())
    .action(
      act(async (file: string, node: string, o: { set: string[] }) =>
        (await import('./commands/outputs.js')).outputsCommand(file, node, o, io),
      ),
    );

  const cache = program.command('cache').description('inspect and clean the node cache');
  cache
    .command('ls')
    .description('list cache entries and the experiments that use them')
    .option('--cache <dir>', 'cache root (default: from mlepipe.config.*, else ./.mlepipe)')
    .option('--json', 'JSON output')
    .action(
      act(async (o: { cache?: string; json?: boolean }) => (await import('./commands/cache.js')).cacheLsCommand(o, io)),
    );
  cache
    .command('gc')
    .description('remove entries no lock file references')
    .option('--cache <dir>', 'cache root')
    .option('--dry-run', 'only list what would go')
    .action(
      act(async (o: { cache?: string; dryRun?: boolean }) =>
        (await import('./commands/cache.js')).cacheGcCommand(o, io),
      ),
    );

  cache
    .command('verify')
    .description('hash every file of each entry (default: all) against its manifest; exit 1 when any is damaged')
    .argument('[keys...]', 'entry keys or prefixes, as cache ls shows them')
    .option('--cache <dir>', 'cache root')
    .option('--json', 'JSON output')
    .option('--repair', 'remove damaged entries (their nodes rebuild on the next run)')
    .action(
      act(async (keys: string[], o: { cache?: string; json?: boolean; repair?: boolean }) =>
        (await import('./commands/cache.js')).cacheVerifyCommand(keys, o, io),
      ),
    );

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
        ) => (await import('./commands/sandbox.js')).sandboxRunCommand(file, o, io),
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
      act(async (o: SandboxServeArgs) => (await import('./commands/sandbox-serve.js')).sandboxServeCommand(o, io)),
    );

  const tools = program.command('tools').description('diagnostic tools agents call (docs/tools.md)');
  tools
    .command('list')
    .description('the registered tools: name, domain, what each returns and its required arguments')
    .option('--domain <d>', 'shared | tabular | time-series | nlp | vision | graph')
    .option('--json', "JSON output, with each tool's argument schema")
    .action(
      act(async (o: { domain?: string; json?: boolean }) =>
        (await import('./commands/tools.js')).toolsListCommand(o, io),
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
        (await import('./commands/tools.js')).toolsRunCommand(name, o, io),
      ),
    );

  const task = program.command('task').description('inspect and import task folders');
  task
    .command('show')
    .description("a task's kind, metric, thresholds, files and its sample submission's score")
    .argument('<dir>')
    .option('--json', 'JSON output')
    .action(
      act(async (dir: string, o: { json?: boolean }) =>
        (await import('./commands/task.js')).taskShowCommand(dir, o, io),
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
      act(async (src: string, dest: string) => (await import('./commands/task.js')).taskImportCommand(src, dest, io)),
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
        (await import('./commands/reward.js')).rewardCommand(f, o, io),
      ),
    );

  program
    .command('serve')
    .description(
      "serve a checkpoint (an sft node's checkpoint/ or outputs, or a model folder) on a trainer worker: an OpenAI-compatible endpoint, until Ctrl-C",
    )
    .argument('<checkpoint>')
    .option('--port <n>', 'port to listen on (0: a free one)', '8000')
    .option('--host <h>', 'address to listen on', '127.0.0.1')
    .option('--threads <n>', 'torch CPU threads')
    .action(
      act(async (ck: string, o: { port?: string; host?: string; threads?: string }) =>
        (await import('./commands/serve.js')).serveCommand(ck, o, io),
      ),
    );

  const hosts = program
    .command('hosts')
    .description('list the hosts in mlepipe.config.yaml: reachability, Docker version, GPUs (nvidia-smi there), image')
    .option('--json', 'JSON output')
    .addOption(setOption('a host setting: hosts.NAME.KEY'))
    .action(
      act(async (o: { json?: boolean; set?: string[] }) => (await import('./commands/hosts.js')).hostsCommand(o, io)),
    );
  hosts
    .command('build')
    .description("build the image nodes run in (gpu/Dockerfile) on a host's engine")
    .argument('<name>', 'a host in mlepipe.config.yaml')
    .option('--file <dockerfile>', 'another Dockerfile (its folder is the context)')
    .option('--tag <image>', "the image's name (default: the host's image:, else mlepipe-host:latest)")
    .addOption(setOption('a host setting: hosts.NAME.KEY'))
    .action(
      act(async (name: string, o: { file?: string; tag?: string; set?: string[] }) =>
        (await import('./commands/hosts.js')).hostsBuildCommand(name, o, io),
      ),
    );

  program
    .command('doctor')
    .description(
      'check node, python (numpy/pandas/sklearn), the Python environments (agent, trainer), bubblewrap, docker, GPU hosts',
    )
    .option('--json', 'JSON output')
    .action(act(async (o: { json?: boolean }) => (await import('./commands/doctor.js')).doctorCommand(o, io)));

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
