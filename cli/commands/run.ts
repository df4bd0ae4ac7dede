import { PlainReporter } from '../../pipelines/run/reporter.js';
import { runPlan } from '../../pipelines/run/scheduler.js';
import { integerFlag } from '../flags.js';
import type { IO } from '../io.js';
import { planFor, type PlanArgs } from './plan.js';
import { printReport } from './report.js';

export interface RunArgs extends PlanArgs {
  /** -j as typed (a string from the command line, a number from tests). */
  jobs?: number | string;
  keepGoing?: boolean;
}

export async function runCommand(file: string, args: RunArgs, io: IO): Promise<number> {
  // The same bound as `concurrency` in the settings.
  const jobs = integerFlag('-j', args.jobs, 1, 256);
  const plan = await planFor(file, args, io);
  const title = `mlepipe run ${plan.experiment.name}`;
  // listr2 is loaded only for a terminal that shows its display.
  const reporter = io.interactive
    ? new (await import('../../pipelines/run/listr.js')).ListrReporter(title)
    : new PlainReporter((l) => io.err(l), title);
  const result = await runPlan(plan, { concurrency: jobs, keepGoing: args.keepGoing, signal: io.signal, reporter });
  for (const f of result.failures) {
    io.err(`\n✖ ${f.id}: ${f.message}`);
    if (f.tail?.length)
      io.err(
        f.tail
          .slice(-10)
          .map((l) => `    ${l}`)
          .join('\n'),
      );
    if (f.log) io.err(`  full log: ${f.log}`);
  }
  if (result.summary.interrupted) return 130;
  if (result.failures.length) return 1;
  // The experiment's tables are what the run was for: show them.
  if (Object.keys(plan.experiment.tables).length || Object.keys(plan.experiment.figures).length) {
    io.err('');
    await printReport(plan, 'text', io);
  }
  return 0;
}
