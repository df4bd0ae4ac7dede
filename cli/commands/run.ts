import { EnvError } from '../../core/errors.js';
import { blocked, missingLines, preflight } from '../../pipelines/preflight.js';
import type { Plan } from '../../pipelines/plan.js';
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
  /** false (`--no-preflight`): start even when a node to run lacks something. */
  preflight?: boolean;
}

export async function runCommand(file: string, args: RunArgs, io: IO): Promise<number> {
  // The same bound as `concurrency` in the settings.
  const jobs = integerFlag('-j', args.jobs, 1, 256);
  const plan = await planFor(file, args, io);
  if (args.preflight !== false) await refuseMissing(plan, io);
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

/**
 * Nothing starts while a node to run lacks what it cannot run without (pipelines/preflight.ts); each node and
 * what it lacks is listed. What a node runs without (a competition without data) is listed and the run goes on.
 */
async function refuseMissing(plan: Plan, io: IO): Promise<void> {
  const pre = await preflight(plan, { env: io.env });
  const stopped = blocked(pre);
  const listed = stopped.length ? stopped : [...pre.missing.keys()];
  const lines = listed.flatMap((id) => [`  ${id}`, ...missingLines(pre, id)]);
  if (!stopped.length) {
    if (lines.length) io.err(['preflight: nodes to run lack what they run without:', ...lines].join('\n'));
    return;
  }
  throw new EnvError(
    [
      `mlepipe run: ${stopped.length} of the ${pre.checked.length} node(s) to run lack what they need; nothing was started:`,
      ...lines,
      'Provide them, run what has what it needs (--only NODE), or start anyway with --no-preflight.',
    ].join('\n'),
  );
}
