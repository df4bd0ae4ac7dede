// `mlepipe tools list` and `mlepipe tools run` through the built CLI.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli, tmpProject } from '../helpers.js';

const rows = Array.from({ length: 20 }, (_, i) => `${i},${i % 10 < 3 ? '' : i * 1.5},${i % 2}`);
const FILES = {
  'task/public/train.csv': `id,x,y\n${rows.join('\n')}\n`,
  'task/private/answer.csv': 'id,y\n1,SECRET\n',
  'run.log': 'step 1 loss=0.9\nstep 2 loss=0.5\nstep 3 loss=0.4\n',
};

test('tools list: every tool with its domain; --domain filters; --json carries the schemas', async () => {
  const dir = await tmpProject(FILES);
  const all = await cli(['tools', 'list'], { cwd: dir });
  assert.is(all.exitCode, 0, all.stderr);
  assert.is(all.stdout.trim().split('\n').length, 67);
  assert.match(all.stdout, /detect_missing_values\s+tabular\s+per-column missing/);
  const ts = JSON.parse((await cli(['tools', 'list', '--domain', 'time-series', '--json'], { cwd: dir })).stdout);
  assert.is(ts.length, 15);
  assert.equal(ts.find((t: { name: string }) => t.name === 'granger_causality_test').args.required, [
    'path',
    'cause',
    'effect',
  ]);
  // The docs write a module by its suite domain's name too (time_series, cv): the same tools.
  for (const [alias, module] of [
    ['time_series', 'time-series'],
    ['cv', 'vision'],
  ]) {
    const listed = await cli(['tools', 'list', '--domain', alias, '--json'], { cwd: dir });
    assert.is(listed.exitCode, 0, listed.stderr);
    const tools = JSON.parse(listed.stdout) as { domain: string }[];
    assert.ok(tools.length > 0 && tools.every((t) => t.domain === module), `${alias}: the ${module} tools`);
  }
  const bad = await cli(['tools', 'list', '--domain', 'time-serie'], { cwd: dir });
  assert.is(bad.exitCode, 2);
  assert.match(bad.stderr, 'did you mean "time-series"');
});

test('tools run: the answer text, or the whole answer with --json; files copied in with --file', async () => {
  const dir = await tmpProject(FILES);
  const r = await cli(['tools', 'run', 'detect_missing_values', '--task', 'task', '--arg', 'path=public/train.csv'], {
    cwd: dir,
  });
  assert.is(r.exitCode, 0, r.stderr);
  assert.match(r.stdout, 'x: 30.0%');
  const j = JSON.parse(
    (
      await cli(
        ['tools', 'run', 'detect_missing_values', '--task', 'task', '--arg', 'path=public/train.csv', '--json'],
        { cwd: dir },
      )
    ).stdout,
  );
  assert.equal([j.ok, j.tool, j.evidence.columns[0].missing], [true, 'detect_missing_values', 6]);
  const log = JSON.parse(
    (
      await cli(
        [
          'tools',
          'run',
          'extract_training_metric_series',
          '--task',
          'task',
          '--file',
          'run.log',
          '--arg',
          'path=run.log',
          '--arg',
          'metrics=loss',
          '--json',
        ],
        { cwd: dir },
      )
    ).stdout,
  );
  assert.equal(
    log.evidence.series.loss.map((p: { value: number }) => p.value),
    [0.9, 0.5, 0.4],
  );
});

test('tools run: a bad name, bad arguments and private/ are refused with a message', async () => {
  const dir = await tmpProject(FILES);
  const name = await cli(['tools', 'run', 'detect_missing', '--task', 'task'], { cwd: dir });
  assert.is(name.exitCode, 2);
  assert.match(name.stderr, 'unknown tool "detect_missing" (did you mean "detect_missing_values"?)');
  const args = await cli(
    ['tools', 'run', 'detect_outliers', '--task', 'task', '--arg', 'file=public/train.csv', '--arg', 'k=lots'],
    { cwd: dir },
  );
  assert.is(args.exitCode, 2);
  assert.match(args.stderr, 'argument "file": unknown');
  assert.match(args.stderr, 'argument "k": must be a number, not "lots"');
  assert.match(args.stderr, 'argument "path": missing');
  assert.not.match(args.stderr, '    at ');
  const secret = await cli(
    ['tools', 'run', 'detect_missing_values', '--task', 'task', '--arg', 'path=../private/answer.csv', '--json'],
    { cwd: dir },
  );
  assert.is(secret.exitCode, 1);
  assert.not.match(secret.stdout, 'SECRET');
  assert.match(JSON.parse(secret.stdout).text, 'outside the workspace');
  const noTask = await cli(['tools', 'run', 'acf', '--task', 'nowhere', '--arg', 'path=x.csv'], { cwd: dir });
  assert.is(noTask.exitCode, 2);
  assert.match(noTask.stderr, 'not a task folder');
});

test.run();
