// The terminal view: one listr2 task per node the plan runs, each waiting for its node's
// events. The scheduler owns the work; listr2 only draws. A node's task stays in listr2's
// waiting state (◼) until the scheduler starts it, so only running nodes spin. Nodes the plan
// found cached (·) or left out (-) are printed above the display, as the plain lines print them.
import {
  Listr,
  ListrDefaultRendererLogLevels,
  ListrLogger,
  ListrTaskState,
  ProcessOutput,
  type DefaultRenderer,
  type ListrTaskWrapper,
  type SimpleRenderer,
} from 'listr2';
import type { Metrics, ProgressReport } from '../../stages/contract.js';
import type { PlannedNode } from '../plan.js';
import {
  headerLine,
  metricsBrief,
  progressText,
  resumedText,
  secs,
  startText,
  summaryLine,
  type Reporter,
  type RunSummary,
  type StartInfo,
} from './reporter.js';

type Wrapper = ListrTaskWrapper<unknown, typeof DefaultRenderer, typeof SimpleRenderer>;
type Outcome = { ok: true; title: string } | { ok: false; message: string } | { skip: string };

interface Slot {
  task?: Wrapper;
  /** What happened before listr2 called the node's task (it calls them all at once, but not synchronously). */
  early: ((t: Wrapper) => void)[];
  settle?: (outcome: Outcome) => void;
  settled?: Outcome;
}

export class ListrReporter implements Reporter {
  private slots = new Map<string, Slot>();
  private running?: Promise<unknown>;
  constructor(
    private readonly title: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  begin(nodes: readonly PlannedNode[], concurrency: number): void {
    const width = Math.min(40, Math.max(8, ...nodes.map((n) => n.node.id.length)));
    const lines = [headerLine(this.title, nodes, concurrency)];
    for (const n of nodes)
      if (n.action === 'cached') lines.push(`· ${n.node.id.padEnd(width)}  cached`);
      else if (n.action === 'skip') lines.push(`- ${n.node.id.padEnd(width)}  skipped: ${n.reason}`);
    this.stream.write(lines.join('\n') + '\n');
    // A node the plan found cached whose entry went before the run settled it runs without a line here.
    const live = nodes.filter((n) => n.action === 'run' || n.action === 'rescore');
    const tasks = live.map((n) => {
      const slot: Slot = { early: [] };
      this.slots.set(n.node.id, slot);
      return { title: n.node.id, task: (_: unknown, task: Wrapper) => this.attach(n.node.id, slot, task) };
    });
    const logger = new ListrLogger({ processOutput: new ProcessOutput(this.stream, this.stream) });
    const list = new Listr(tasks, {
      concurrent: true,
      exitOnError: false,
      renderer: 'default',
      rendererOptions: {
        collapseSubtasks: false,
        collapseSkips: true,
        logger,
        // The plain lines' glyph for a node that did not run.
        icon: { [ListrDefaultRendererLogLevels.SKIPPED_WITH_COLLAPSE]: '-' },
      },
    });
    this.running = list.run().catch(() => {});
  }

  /** The node's listr2 task: waiting (no spinner) until the node starts, done when it settles. */
  private attach(id: string, slot: Slot, task: Wrapper): Promise<void> {
    slot.task = task;
    task.task.state$ = ListrTaskState.WAITING;
    for (const f of slot.early) f(task);
    return new Promise<void>((resolve, reject) => {
      slot.settle = (o) => {
        if ('skip' in o) {
          task.skip(`${id}  ${o.skip}`);
          resolve();
        } else if (o.ok) {
          task.title = o.title;
          resolve();
        } else reject(new Error(`${id}: ${o.message}`));
      };
      if (slot.settled) slot.settle(slot.settled);
    });
  }

  /** Does `f` to the node's task now, or as soon as listr2 has called it. */
  private with(id: string, f: (t: Wrapper) => void): void {
    const s = this.slots.get(id);
    if (!s) return;
    if (s.task) f(s.task);
    else s.early.push(f);
  }
  private settle(id: string, o: Outcome): void {
    const s = this.slots.get(id);
    if (!s) return;
    if (s.settle) s.settle(o);
    else s.settled = o;
  }

  cached(id: string, why: string): void {
    // Only a node that was to run can be cached now (another run finished it first): it is done, not skipped.
    this.settle(id, { ok: true, title: `${id}  ${why}` });
  }
  waiting(id: string, why: string): void {
    this.with(id, (t) => {
      t.title = `${id}  ${why}`;
    });
  }
  started(id: string, info: StartInfo): void {
    this.with(id, (t) => {
      t.task.state$ = ListrTaskState.STARTED;
      t.title = info.rescore ? `${id}  rescoring` : id;
      t.output = startText(info);
    });
  }
  resumed(id: string, kept: number, total: number, unit: string): void {
    this.with(id, (t) => (t.output = resumedText(kept, total, unit)));
  }
  progress(id: string, p: ProgressReport): void {
    this.with(id, (t) => (t.output = progressText(p)));
  }
  log(id: string, line: string): void {
    this.with(id, (t) => (t.output = line.slice(0, 200)));
  }
  done(id: string, ms: number, metrics: Metrics, rescored: boolean): void {
    this.settle(id, { ok: true, title: `${id}  ${rescored ? 'rescored in ' : ''}${secs(ms)}${metricsBrief(metrics)}` });
  }
  failed(id: string, message: string): void {
    this.settle(id, { ok: false, message });
  }
  skipped(id: string, why: string): void {
    this.settle(id, { skip: `skipped: ${why}` });
  }
  async end(s: RunSummary): Promise<void> {
    await this.running;
    this.stream.write(`${summaryLine(s)}\n`);
  }
}
