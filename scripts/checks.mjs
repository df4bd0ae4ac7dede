// The static checks: the type-check and the linters of both languages, each
// named once here. `npm run typecheck`, `npm run lint` (and its halves) run
// them through this script; `npm test` hands them to test/run.mjs, which runs
// them beside the test files, in the same two lanes, so that on two cores a
// linter is not a minute of one core working while the other waits.
//
//   node scripts/checks.mjs [NAME|GROUP ...]   runs those checks (all of them
//   when none is named), two at a time; the exit status is 1 when one fails.
//
// Each check is one process, or a few run one after another when each is too
// short to be worth a lane of its own.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedModules } from './schema-types.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name) => join(ROOT, 'node_modules', '.bin', name);
const lintPy = (name) => join(ROOT, '.venv', 'lint', 'bin', name);

/**
 * name: what the runner and the summary call it; group: the npm script that runs it with the others of
 * its group; commands: argv lists run in order, from the repository's root, the first failure ending it.
 * The two mypy runs keep caches of their own: they run at once, and one cache folder is not safe to share
 * between two processes writing it.
 */
export const CHECKS = [
  { name: 'tsc', group: 'typecheck', commands: [[bin('tsc'), '--noEmit']] },
  { name: 'eslint', group: 'lint:ts', commands: [[bin('eslint'), '.']] },
  {
    name: 'prettier',
    group: 'lint:ts',
    commands: [[bin('prettier'), '--check', '--log-level', 'warn', '**/*.{ts,mts,mjs}']],
  },
  {
    name: 'ruff',
    group: 'lint:py',
    commands: [
      [lintPy('ruff'), 'check', '.'],
      [lintPy('ruff'), 'format', '--check', '.'],
      // File and function sizes, which ruff does not count (scripts/py-sizes.py names the exceptions).
      [lintPy('python'), 'scripts/py-sizes.py'],
    ],
  },
  {
    name: 'mypy-worker',
    group: 'lint:py',
    commands: [
      [
        lintPy('mypy'),
        '--cache-dir',
        '.mypy_cache/worker',
        '--python-executable',
        '.venv/trainer/bin/python',
        'gpu/worker/mlepipe_worker',
      ],
    ],
  },
  {
    name: 'mypy-tools',
    group: 'lint:py',
    commands: [
      [
        lintPy('mypy'),
        '--cache-dir',
        '.mypy_cache/tools',
        '--python-executable',
        '.venv/agent/bin/python',
        'tools/py/mlepipe_tools',
      ],
    ],
  },
];

/**
 * Writes the types generated from the schemas (scripts/schema-types.mjs: stages/params.gen.ts,
 * pipelines/config/schema.gen.ts), before any check starts: tsc compares them with the hand-written types, and
 * ESLint's type information needs them as well. A file that is already current is left alone; a new one replaces
 * the old in one rename, never seen half written.
 */
export function prepare() {
  for (const { file, text } of generatedModules()) {
    if (existsSync(file) && readFileSync(file, 'utf8') === text) continue;
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  }
}

/** The checks `words` name, by name or group (`lint` is both lint groups); all of them for none. */
export function pick(words) {
  if (!words.length) return CHECKS;
  return words.flatMap((w) => {
    const found = CHECKS.filter((c) => c.name === w || c.group === w || (w === 'lint' && c.group.startsWith('lint:')));
    if (!found.length)
      throw new Error(
        `no check or group named ${w} (checks: ${CHECKS.map((c) => c.name).join(', ')}; groups: typecheck, lint, lint:ts, lint:py)`,
      );
    return found;
  });
}

/**
 * Runs one check in a process group of its own (`onStart` gets each process, for a caller that kills on
 * Ctrl-C). Resolves with whether it passed and everything it printed; a tool that is not installed fails
 * the check, saying so, rather than throwing.
 */
export function runCheck(check, { env = process.env, onStart = () => {} } = {}) {
  return new Promise((resolve) => {
    let out = '';
    const next = (i) => {
      if (i === check.commands.length) return resolve({ ok: true, out });
      const [cmd, ...args] = check.commands[i];
      if (cmd.startsWith('/') && !existsSync(cmd)) {
        return resolve({
          ok: false,
          out: `${out}${cmd} is missing: run scripts/setup.sh (the Node packages, and python/lint.lock in .venv/lint)\n`,
        });
      }
      const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      onStart(child);
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      child.on('error', (err) => resolve({ ok: false, out: `${out}${cmd}: ${err.message}\n` }));
      child.on('close', (code, signal) =>
        code === 0
          ? next(i + 1)
          : resolve({
              ok: false,
              out: `${out}[${check.name}] ${[cmd, ...args].join(' ')} exited with ${signal ?? `code ${code}`}\n`,
            }),
      );
    };
    next(0);
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let checks;
  try {
    checks = pick(process.argv.slice(2));
  } catch (err) {
    console.error(`checks: ${err.message}`);
    process.exit(2);
  }
  prepare();
  const queue = [...checks];
  let failed = 0;
  await Promise.all(
    [0, 1].map(async () => {
      while (queue.length) {
        const check = queue.shift();
        const t0 = Date.now();
        const r = await runCheck(check);
        const secs = ((Date.now() - t0) / 1000).toFixed(1);
        if (!r.ok) failed++;
        process.stdout.write(
          r.ok ? `${check.name}: passed (${secs}s)\n` : `${check.name}: FAILED (${secs}s)\n${r.out}\n`,
        );
      }
    }),
  );
  process.exitCode = failed ? 1 : 0;
}
