// Runs every *.test.ts file in its own Node process (two at a time by
// default), prints each file's uvu output, and ends with one line
// `N passed, N failed` for humans and CI alike. Optional arguments filter
// files by substring.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { cpus } from 'node:os';

const ROOTS = ['core', 'pipelines', 'stages', 'cli', 'sandbox', 'tasks', 'agents', 'seeds', 'gpu', 'test'].filter((d) => existsSync(d));
const filters = process.argv.slice(2);
const jobs = Number(process.env.MLEPIPE_TEST_JOBS ?? Math.min(2, cpus().length));
const perFileTimeoutMs = 8 * 60_000;

function find(dir) {
  let out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) continue;
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const files = ROOTS.flatMap((r) => find(r))
  .filter((f) => !filters.length || filters.some((x) => f.includes(x)))
  .sort((a, b) => Number(a.includes('e2e')) - Number(b.includes('e2e')) || a.localeCompare(b));

let passed = 0;
let failed = 0;
const t0 = Date.now();

function runFile(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const timer = setTimeout(() => {
      out += `\n[test runner] ${file} exceeded ${perFileTimeoutMs / 1000}s; killed\n`;
      child.kill('SIGKILL');
    }, perFileTimeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      const total = Number(/Total:\s+(\d+)/.exec(out)?.[1] ?? 0);
      const ok = Number(/Passed:\s+(\d+)/.exec(out)?.[1] ?? 0);
      let bad = total - ok;
      // A file that crashed before reporting, or exited non-zero with all passed, counts as one failure.
      if ((code !== 0 && bad === 0) || total === 0) bad += 1;
      passed += ok;
      failed += bad;
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`\n── ${relative('.', file)}  (${ok}/${total} passed, ${secs}s)\n${bad ? out : out.split('\n').filter((l) => /✘|FAIL/.test(l)).join('\n')}`);
      resolve();
    });
  });
}

const queue = [...files];
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    while (queue.length) await runFile(queue.shift());
  }),
);
process.stdout.write(`\n${files.length} test files in ${((Date.now() - t0) / 1000).toFixed(1)}s\n`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed ? 1 : 0;
