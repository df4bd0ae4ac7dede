// --force reruns a node's work from scratch; --rebuild reruns it keeping the items an earlier attempt finished.
// The progress lines name what is counted, show the latest item's summary and say what a resumed node kept.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand, type RunArgs } from '../../cli/commands/run.js';
import { memoryIO } from '../../cli/io.js';
import type { Stage, StageContext } from '../../stages/contract.js';
import { STAGES } from '../../stages/registry.js';
import { announceKept } from '../../stages/shared/resume.js';
import { tmpProject } from '../../test/helpers.js';

const shell = STAGES.shell as { run: Stage<unknown>['run'] };

/** Runs the one-node experiment with a stage that checkpoints three items; returns how many it computed. */
async function run(dir: string, args: RunArgs): Promise<{ computed: number; stderr: string }> {
  let computed = -1;
  const saved = shell.run;
  shell.run = async (ctx: StageContext<unknown>) => {
    computed = 0;
    const ids = ['x', 'y', 'z'];
    await announceKept(ctx, ids, 'widgets');
    for (const [i, id] of ids.entries()) {
      if (!(await ctx.items.get(id))) {
        await ctx.items.put(id, (d) => writeFile(join(d, 'v'), id));
        computed++;
      }
      ctx.progress({ done: i + 1, total: ids.length, unit: 'widgets', summary: `widget ${id}: fine` });
    }
    await writeFile(join(ctx.outDir, 'n'), String(computed));
    return { metrics: { computed } };
  };
  try {
    const io = memoryIO();
    const code = await runCommand(join(dir, 'e.yaml'), args, io);
    assert.is(code, 0, io.stderr.join('\n'));
    return { computed, stderr: io.stderr.join('\n') };
  } finally {
    shell.run = saved;
  }
}

test('--force computes every item again; --rebuild keeps the finished ones; a cached node computes nothing', async () => {
  const dir = await tmpProject({ 'e.yaml': 'name: f\nstages:\n  a: { uses: shell, with: { run: "true" } }\n' });
  const first = await run(dir, {});
  assert.is(first.computed, 3);
  assert.match(first.stderr, /\n▶ a +running; log \S+\.mlepipe\/logs\/[0-9a-f]{64}\.log\n/);
  assert.match(first.stderr, /\n… a +3\/3 widgets  latest: widget z: fine\n/);
  assert.is((await run(dir, {})).computed, -1, 'cached: the stage does not run');
  const forced = await run(dir, { force: true });
  assert.is(forced.computed, 3, 'a forced node redoes its items');
  assert.is((await run(dir, { force: 'a' })).computed, 3);
  assert.not.match(forced.stderr, 'resumed');
  const rebuilt = await run(dir, { rebuild: 'a' });
  assert.is(rebuilt.computed, 0, '--rebuild takes the finished items');
  assert.match(rebuilt.stderr, /\n… a +resumed: 3 of 3 widgets kept from an earlier attempt, none left to run\n/);
  // Named by both, a node runs from scratch.
  assert.is((await run(dir, { force: 'a', rebuild: true })).computed, 3);
  const logPath = join(dir, '.mlepipe', 'logs');
  const [log] = await readdir(logPath);
  assert.match(
    await readFile(join(logPath, log!), 'utf8'),
    'mlepipe: --force: dropped the 3 item(s) an earlier attempt finished; every item runs again',
  );
});

test.run();
