// Progress events of a run. Two views: plain lines (no TTY, CI, tests) and a
// live listr2 display on a terminal.
import { relative } from 'node:path';
import type { Metrics, ProgressReport } from '../../stages/contract.js';
import type { PlannedNode } from '../plan.js';

/** How a node's work starts: in full, or rebuilt from another entry's runs (nothing runs again). */
export interface StartInfo {
  readonly rescore: boolean;
  /** The node's log, which a long node's work can be followed in. */
  readonly log: string;
}

export interface Reporter {
  begin(nodes: readonly PlannedNode[], concurrency: number): void;
  cached(id: string, why: string): void;
  waiting(id: string, why: string): void;
  started(id: string, info: StartInfo): void;
  /** Once, before the work, when an earlier attempt finished `kept` of its `total` units. */
  resumed(id: string, kept: number, total: number, unit: string): void;
  progress(id: string, p: ProgressReport): void;
  log(id: string, line: string): void;
  done(id: string, ms: number, metrics: Metrics, rescored: boolean): void;
  failed(id: string, message: string): void;
  skipped(id: string, why: string): void;
  end(summary: RunSummary): Promise<void>;
}

export interface RunSummary {
  ran: number;
  /** Of the nodes that did their work, those rebuilt from another entry's runs (not counted in `ran`). */
  rescored: number;
  cached: number;
  failed: number;
  skipped: number;
  ms: number;
  interrupted: boolean;
}

/** The run's first line: what the plan holds, each action counted once. */
export function headerLine(title: string, nodes: readonly PlannedNode[], concurrency: number): string {
  const count = (a: PlannedNode['action']) => nodes.filter((n) => n.action === a).length;
  const parts = [`${nodes.length} nodes`, `${count('cached')} cached`, `${count('run')} to run`];
  if (count('rescore')) parts.push(`${count('rescore')} to rescore`);
  if (count('skip')) parts.push(`${count('skip')} skipped`);
  return `${title}: ${parts.join(', ')} (-j ${concurrency})`;
}

/** `2/4 steps`, and the latest unit's summary when the stage gave one. */
export function progressText(p: ProgressReport): string {
  const count = p.total !== undefined ? `${p.done}/${p.total} ${p.unit}` : `${p.done} ${p.unit}`;
  return p.summary ? `${count}  latest: ${p.summary}` : count;
}

export function resumedText(kept: number, total: number, unit: string): string {
  const left = total - kept;
  return `resumed: ${kept} of ${total} ${unit} kept from an earlier attempt, ${left ? `${left} to run` : 'none left to run'}`;
}

/** What a node does as it starts, with its log (relative to the working folder when inside it). */
export function startText(info: StartInfo, cwd = process.cwd()): string {
  const rel = relative(cwd, info.log);
  const log = rel && !rel.startsWith('..') ? rel : info.log;
  return `${info.rescore ? 'rescoring from the recorded runs' : 'running'}; log ${log}`;
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
  if (s.rescored) parts.push(`${s.rescored} rescored`);
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
    this.write(headerLine(this.title, nodes, concurrency));
  }
  cached(id: string, why: string): void {
    this.line('·', id, why);
  }
  waiting(id: string, why: string): void {
    this.line('…', id, why);
  }
  started(id: string, info: StartInfo): void {
    this.line(info.rescore ? '↻' : '▶', id, startText(info));
  }
  resumed(id: string, kept: number, total: number, unit: string): void {
    this.line('…', id, resumedText(kept, total, unit));
  }
  progress(id: string, p: ProgressReport): void {
    const now = Date.now();
    if (now - (this.lastProgress.get(id) ?? 0) < 2000 && p.done !== p.total) return;
    this.lastProgress.set(id, now);
    this.line('…', id, progressText(p));
  }
  log(): void {}
  done(id: string, ms: number, metrics: Metrics, rescored: boolean): void {
    this.line('✔', id, `${rescored ? 'rescored' : 'done'} in ${secs(ms)}${metricsBrief(metrics)}`);
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
