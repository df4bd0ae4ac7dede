// A pytest suite's tests one by one: pytest writes a JUnit XML report, and each of its cases becomes a uvu
// test of its own, so that test/run.mjs counts (and names) every Python test rather than one for the suite.
import { execa } from 'execa';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PytestCase {
  /** `module.path::test_name`, as the report names it (classname and name). */
  id: string;
  outcome: 'passed' | 'failed' | 'skipped';
  /** pytest's message and traceback for a failure, an error or a skip. */
  detail?: string;
}

const unescape = (s: string) =>
  s.replace(/&(lt|gt|quot|apos|amp|#(\d+)|#x([0-9a-f]+));/gi, (_, e: string, d?: string, h?: string) =>
    d
      ? String.fromCodePoint(Number(d))
      : h
        ? String.fromCodePoint(parseInt(h, 16))
        : ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' } as Record<string, string>)[e.toLowerCase()],
  );
const attr = (attrs: string, name: string) => unescape(new RegExp(`\\b${name}="([^"]*)"`).exec(attrs)?.[1] ?? '');

/** The cases of a JUnit XML report as pytest writes it (a collection error is a case with an error too). */
export function pytestCases(xml: string): PytestCase[] {
  return [...xml.matchAll(/<testcase\b([^>]*?)(?:\/>|>([\s\S]*?)<\/testcase>)/g)].map(([, attrs, body = '']) => {
    const id = `${attr(attrs, 'classname')}::${attr(attrs, 'name')}`;
    const child = /<(failure|error|skipped)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/.exec(body);
    if (!child) return { id, outcome: 'passed' };
    const detail = [attr(child[2], 'message'), unescape(child[3] ?? '')].filter(Boolean).join('\n');
    return { id, outcome: child[1] === 'skipped' ? 'skipped' : 'failed', detail };
  });
}

/** Runs pytest with `args` and reads its report back; `cases` is empty when pytest wrote none. */
export async function runPytest(python: string, args: string[], opts: { cwd: string; timeoutMs: number }) {
  const report = join(await mkdtemp(join(tmpdir(), 'pytest-')), 'report.xml');
  const run = await execa(python, ['-m', 'pytest', ...args, '-q', `--junitxml=${report}`], {
    cwd: opts.cwd,
    reject: false,
    all: true,
    timeout: opts.timeoutMs,
  });
  const xml = await readFile(report, 'utf8').catch(() => '');
  return { exitCode: run.exitCode, output: run.all ?? '', cases: pytestCases(xml) };
}
