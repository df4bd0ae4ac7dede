import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import { Answers } from './protocol.js';

test("the warm server's answers: a line that arrives after a wait gave up goes to the next wait", async () => {
  const out = new PassThrough();
  const answers = new Answers(out);
  assert.is(await answers.next(20), null);
  out.write('{"n": 1}\n{"n": 2}\n');
  assert.equal(await answers.next(1000), { n: 1 });
  assert.equal(await answers.next(1000), { n: 2 });
  out.end();
  assert.is(await answers.next(1000), null);
});

test.run();
