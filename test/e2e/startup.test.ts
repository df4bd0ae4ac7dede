// What the built CLI loads: `--version` nothing but its argument parser,
// `plan` none of the packages only running, drawing or the sandbox need, and
// ajv only as the helpers of the validators compiled at build time.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, tmpProject } from '../helpers.js';

// Preloaded into the CLI's process: every module resolved (ES modules, through a
// resolve hook) and every CommonJS module in require's cache at exit, one per line on stderr.
const HOOK = `import { createRequire, register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent("export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write('LOADED ' + r.url + '\\\\n'); return r; }"));
const require = createRequire(import.meta.url);
process.on('exit', () => { for (const k of Object.keys(require.cache)) process.stderr.write('LOADED ' + k + '\\n'); });
`;

const hookFile = join(await mkdtemp(join(tmpdir(), 'mlepipe-startup-')), 'hook.mjs');
await writeFile(hookFile, HOOK);

/** The files under node_modules the command loaded, as `package/path`, and its result. */
async function loaded(args: string[], cwd: string): Promise<{ files: string[]; exitCode: number; stderr: string }> {
  const r = await execa(process.execPath, ['--import', pathToFileURL(hookFile).href, CLI, ...args], {
    cwd,
    reject: false,
    env: { CI: 'true', NO_COLOR: '1' },
  });
  const files = [
    ...new Set(
      String(r.stderr)
        .split('\n')
        .filter((l) => l.startsWith('LOADED '))
        .map((l) => l.slice(7))
        .filter((f) => f.includes('node_modules/'))
        .map((f) => f.slice(f.lastIndexOf('node_modules/') + 13)),
    ),
  ];
  return {
    files,
    exitCode: r.exitCode ?? -1,
    stderr: String(r.stderr)
      .split('\n')
      .filter((l) => !l.startsWith('LOADED '))
      .join('\n'),
  };
}

const packageOf = (f: string) =>
  f
    .split('/')
    .slice(0, f.startsWith('@') ? 2 : 1)
    .join('/');
const HEAVY = [
  'vega',
  'vega-lite',
  'dockerode',
  'openai',
  'listr2',
  'execa',
  'tar-fs',
  'hyparquet-writer',
  'csv-parse',
];

const EXP = `name: lazy
stages:
  a: { uses: shell, with: { run: "echo '{\\"x\\": 1}' > $MLEPIPE_OUT/metrics.json" } }
  b: { uses: shell, needs: [a], with: { run: "echo '{\\"x\\": 2}' > $MLEPIPE_OUT/metrics.json" } }
figures:
  x: { from: a, rows: node, x: node, y: x }
`;

test('--version loads nothing but the argument parser', async () => {
  const r = await loaded(['--version'], tmpdir());
  assert.is(r.exitCode, 0, r.stderr);
  // The hook sees what it loads, or this test would prove nothing.
  assert.ok(r.files.length > 0);
  assert.equal([...new Set(r.files.map(packageOf))], ['commander']);
});

test('plan loads neither the running, drawing and sandbox packages nor ajv itself', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const r = await loaded(['plan', 'e.yaml'], dir);
  assert.is(r.exitCode, 0, r.stderr);
  const packages = new Set(r.files.map(packageOf));
  assert.ok(packages.has('yaml'), 'the hook sees CommonJS packages');
  for (const p of HEAVY) assert.not.ok(packages.has(p), `plan loaded ${p}`);
  assert.equal(
    r.files.filter((f) => f.startsWith('ajv/') && !f.startsWith('ajv/dist/runtime/')),
    [],
  );
});

test('a run that is all cached does not draw an unchanged figure (vega stays unloaded)', async () => {
  const dir = await tmpProject({ 'e.yaml': EXP });
  const first = await loaded(['run', 'e.yaml'], dir);
  assert.is(first.exitCode, 0, first.stderr);
  assert.ok(
    first.files.some((f) => packageOf(f) === 'vega'),
    'the first run draws the figure',
  );
  const again = await loaded(['run', 'e.yaml'], dir);
  assert.is(again.exitCode, 0, again.stderr);
  assert.match(again.stderr, /figure x: reports\/lazy\/x\.svg/);
  const packages = new Set(again.files.map(packageOf));
  for (const p of ['vega', 'vega-lite', 'listr2', 'execa'])
    assert.not.ok(packages.has(p), `the cached run loaded ${p}`);
});

test.run();
