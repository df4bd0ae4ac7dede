// The terminal view: one listr2 task per node, each waiting for its node's
// events. The scheduler owns the work; listr2 only draws.
import {
  Listr,
  ListrLogger,
  ProcessOutput,
  type DefaultRenderer,
  type ListrTaskWrapper,
  type SimpleRenderer,
} from 'listr2';
import type { Metrics } from '../../stages/contract.js';
import type { PlannedNode } from '../plan.js';
import { metricsBrief, secs, summaryLine, type Reporter, type RunSummary } from './reporter.js';

interface Slot {
  task?: ListrTaskWrapper<unknown, typeof DefaultRenderer, typeof SimpleRenderer>;
  settle?: (outcome: { ok: true; title: string } | { ok: false; message: string } | { skip: string }) => void;
  early?: Parameters<NonNullable<Slot['settle']>>[0];
}

export class ListrReporter implements Reporter {
  private slots = new Map<string, Slot>();
  private running?: Promise<unknown>;
  constructor(
    private readonly title: string,
    private readonly stream: NodeJS.WriteStream = process.stderr,
  ) {}

  begin(nodes: readonly PlannedNode[], concurrency: number): void {
    const run = nodes.filter((n) => n.action === 'run' || n.action === 'rescore').length;
    this.stream.write(
      `${this.title}: ${nodes.length} nodes, ${nodes.length - run} cached or skipped, ${run} to run (-j ${concurrency})\n`,
    );
    const tasks = nodes.map((n) => {
      const slot: Slot = {};
      this.slots.set(n.node.id, slot);
      return {
        title: n.node.id,
        task: (_: unknown, task: ListrTaskWrapper<unknown, typeof DefaultRenderer, typeof SimpleRenderer>) =>
          new Promise<void>((resolve, reject) => {
            slot.task = task;
            slot.settle = (o) => {
              if ('skip' in o) {
                task.skip(`${n.node.id}  ${o.skip}`);
                resolve();
              } else if (o.ok) {
                task.title = o.title;
                resolve();
              } else reject(new Error(`${n.node.id}: ${o.message}`));
            };
            if (slot.early) slot.settle(slot.early);
          }),
      };
    });
    const logger = new ListrLogger({ processOutput: new ProcessOutput(this.stream, this.stream) });
    const list = new Listr(tasks, {
      concurrent: true,
      exitOnError: false,
      renderer: 'default',
      rendererOptions: { collapseSubtasks: false, collapseSkips: true, logger },
    });
    this.running = list.run().catch(() => {});
  }
  private settle(id: string, o: Parameters<NonNullable<Slot['settle']>>[0]): void {
    const s = this.slots.get(id);
    if (!s) return;
    if (s.settle) s.settle(o);
    else s.early = o;
  }
  private setOutput(id: string, text: string): void {
    const t = this.slots.get(id)?.task;
    if (t) t.output = text;
  }
  cached(id: string, why: string): void {
    this.settle(id, { skip: why });
  }
  waiting(id: string, why: string): void {
    this.setOutput(id, why);
  }
  started(id: string): void {
    this.setOutput(id, 'running');
  }
  progress(id: string, done: number, total?: number): void {
    this.setOutput(id, total ? `${done}/${total} items` : `${done} items`);
  }
  log(id: string, line: string): void {
    this.setOutput(id, line.slice(0, 200));
  }
  done(id: string, ms: number, metrics: Metrics): void {
    this.settle(id, { ok: true, title: `${id}  ${secs(ms)}${metricsBrief(metrics)}` });
  }
  failed(id: string, message: string): void {
    this.settle(id, { ok: false, message });
  }
  skipped(id: string, why: string): void {
    this.settle(id, { skip: why });
  }
  async end(s: RunSummary): Promise<void> {
    await this.running;
    this.stream.write(`${summaryLine(s)}\n`);
  }
}
