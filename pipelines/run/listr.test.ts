// The live display on a terminal: only running nodes spin, cached nodes get `·` and are told apart from
// skipped ones, the header counts each action once, a rescore is shown as one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import type { PlannedNode } from '../plan.js';
import { ListrReporter } from './listr.js';

/** A terminal 100 columns wide that keeps what was drawn on it, frame by frame. */
function terminal(): { stream: NodeJS.WriteStream; text: () => string; frame: () => string } {
  const out = new PassThrough() as PassThrough & { isTTY: boolean; columns: number; rows: number };
  Object.assign(out, { isTTY: true, columns: 100, rows: 40 });
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  const plain = (s: string) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  return {
    stream: out as unknown as NodeJS.WriteStream,
    text: () => plain(text),
    // log-update erases the previous frame line by line before drawing the next: the last frame is after that.
    frame: () => plain(text.slice(text.lastIndexOf('\x1b[2K\x1b[G'))),
  };
}

const node = (id: string, action: PlannedNode['action'], reason: string = action): PlannedNode =>
  ({ node: { id }, action, reason }) as unknown as PlannedNode;

/** Waits until the display's latest frame satisfies `ok` (the renderer draws on a timer). */
async function until(frame: () => string, ok: (f: string) => boolean): Promise<string> {
  for (let i = 0; i < 200; i++) {
    if (ok(frame())) return frame();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.unreachable(`no frame showed what was waited for; the last:\n${frame()}`);
  return '';
}

const SPIN = /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] /;
const glyphOf = (f: string, id: string) =>
  f
    .split('\n')
    .find((l) => l.slice(2).startsWith(id))
    ?.slice(0, 2);

test('only a started node spins; cached and skipped nodes have their own glyphs; a rescore says so', async () => {
  const isTTY = process.stdout.isTTY;
  // listr2 draws its live display only when the process's stdout is a terminal.
  process.stdout.isTTY = true;
  const t = terminal();
  const r = new ListrReporter('mlepipe run x', t.stream);
  let ended = false;
  try {
    const plan = [
      node('d', 'cached'),
      node('e', 'skip', 'not needed by --only a'),
      node('a', 'run'),
      node('b', 'run'),
      node('s', 'rescore'),
    ];
    r.begin(plan, 2);
    r.cached('d', 'cached');
    r.skipped('e', 'not needed by --only a');
    r.started('a', { rescore: false, log: '/tmp/a.log' });
    const first = await until(t.frame, (f) => SPIN.test(f.split('\n').find((l) => l.includes(' a')) ?? ''));
    assert.is(glyphOf(first, 'b'), '◼ ', first);
    assert.is(glyphOf(first, 's'), '◼ ', first);
    r.progress('a', { done: 1, total: 4, unit: 'steps', summary: 'step 1/4: reward 0.5 ± 0.1, valid 1' });
    await until(t.frame, (f) => f.includes('1/4 steps  latest: step 1/4: reward 0.5 ± 0.1, valid 1'));
    r.started('s', { rescore: true, log: '/tmp/s.log' });
    const both = await until(t.frame, (f) => f.includes('s  rescoring'));
    assert.is(glyphOf(both, 'b'), '◼ ', both);
    r.done('a', 1200, {}, false);
    r.done('s', 300, {}, true);
    r.skipped('b', 'needs a, which failed');
    await r.end({ ran: 1, rescored: 1, cached: 1, failed: 0, skipped: 2, ms: 2000, interrupted: false });
    ended = true;
    const text = t.text();
    assert.match(text, 'mlepipe run x: 5 nodes, 1 cached, 2 to run, 1 to rescore, 1 skipped (-j 2)\n');
    assert.match(text, '· d         cached\n');
    assert.match(text, '- e         skipped: not needed by --only a\n');
    const last = t.frame();
    assert.match(last, '✔ a  1.2s');
    assert.match(last, '✔ s  rescored in 0.3s');
    assert.match(last, '- b  skipped: needs a, which failed');
    assert.match(text, 'done: 1 ran, 1 cached, 0 failed, 1 rescored, 2 skipped in 2.0s');
  } finally {
    process.stdout.isTTY = isTTY;
    // A failed check must not leave the display's timer holding the process open.
    if (!ended) {
      for (const id of ['a', 'b', 's']) r.skipped(id, 'test over');
      await r.end({ ran: 0, rescored: 0, cached: 0, failed: 0, skipped: 0, ms: 0, interrupted: true });
    }
  }
});

test.run();
