// Progress events of a run. Two views: plain lines (no TTY, CI, tests) and a
// live listr2 display on a terminal.
import type { Metrics } from '../../stages/contract.js';
import type { PlannedNode } from '../plan.js';

export interface Reporter {
  begin(nodes: readonly PlannedNode[], concurrency: number): void;
  cached(id: string, why: string): void;
  waiting(id: string, why: string): void;
  started(id: string): void;
  progress(id: string, done: number, total?: number): void;
  log(id: string, line: string): void;
  done(id: string, ms: number, metrics: Metrics): void;
  failed(id: string, message: string): void;
  skipped(id: string, why: string): void;
  end(summary: RunSummary): Promise<void>;
}

export interface RunSummary {
  ran: number;
  cached: number;
  failed: number;
  skipped: number;
  ms: number;
  interrupted: boolean;
}

export function secs(ms: number): string {
  return ms < 10_000
    ? `${(ms / 1000).toFixed(1)}s`
    : ms < 120_000
      ? `${Math.round(ms / 1000)}s`
      : `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

export function metricsBrief(m: Metrics, max = 4): string {
  const entries = Object.entries(m).slice(0, max);
  if (!entries.length) return '';
  const fmt = (v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(4)) : v);
  return `  (${entries.map(([k, v]) => `${k}=${fmt(v)}`).join(', ')}${Object.keys(m).length > max ? ', …' : ''})`;
}

export function summaryLine(s: RunSummary): string {
  const head = s.interrupted ? 'interrupted' : s.failed ? 'failed' : 'done';
  const parts = [`${s.ran} ran`, `${s.cached} cached`, `${s.failed} failed`];
  if (s.skipped) parts.push(`${s.skipped} skipped`);
  return `${head}: ${parts.join(', ')} in ${secs(s.ms)}`;
}

/** One line per event; item progress at most every 2 s per node. */
export class PlainReporter implements Reporter {
  private width = 12;
  private lastProgress = new Map<string, number>();
  constructor(
    private readonly write: (line: string) => void,
    private readonly title: string,
  ) {}

  private line(mark: string, id: string, text: string): void {
    this.write(`${mark} ${id.padEnd(this.width)}  ${text}`);
  }
  begin(nodes: readonly PlannedNode[], concurrency: number): void {
    this.width = Math.min(40, Math.max(8, ...nodes.map((n) => n.node.id.length)));
    const run = nodes.filter((n) => n.action === 'run').length;
    const rescore = nodes.filter((n) => n.action === 'rescore').length;
    const cached = nodes.filter((n) => n.action === 'cached').length;
    this.write(
      `${this.title}: ${nodes.length} nodes, ${cached} cached, ${run} to run${rescore ? `, ${rescore} to rescore` : ''} (-j ${concurrency})`,
    );
  }
  cached(id: string, why: string): void {
    this.line('·', id, why);
  }
  waiting(id: string, why: string): void {
    this.line('…', id, why);
  }
  started(id: string): void {
    this.line('▶', id, 'running');
  }
  progress(id: string, done: number, total?: number): void {
    const now = Date.now();
    if (now - (this.lastProgress.get(id) ?? 0) < 2000 && done !== total) return;
    this.lastProgress.set(id, now);
    this.line('…', id, total ? `${done}/${total} items` : `${done} items`);
  }
  log(): void {}
  done(id: string, ms: number, metrics: Metrics): void {
    this.line('✔', id, `done in ${secs(ms)}${metricsBrief(metrics)}`);
  }
  failed(id: string, message: string): void {
    this.line('✖', id, `failed: ${message}`);
  }
  skipped(id: string, why: string): void {
    this.line('-', id, `skipped: ${why}`);
  }
  async end(s: RunSummary): Promise<void> {
    this.write(summaryLine(s));
  }
}
