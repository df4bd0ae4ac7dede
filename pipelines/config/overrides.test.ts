// `-S` problems as a user reads them: the argument, then where in it, then what is wrong.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../../core/errors.js';
import { loadExperiment } from './load.js';

const EXP = 'name: e\nstages:\n  a: { uses: shell, with: { run: x, timeout_s: 5 } }\n';

/** The printed error of loading EXP with these `-S` arguments. */
async function refused(...overrides: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-overrides-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  await writeFile(join(dir, 'e.yaml'), EXP);
  try {
    await loadExperiment(join(dir, 'e.yaml'), { overrides, env: {} });
  } catch (err) {
    if (err instanceof UserError) return err.message;
    throw err;
  }
  return 'accepted';
}

test('a misspelled key: the argument, then the column of that key', async () => {
  // "-S stages.a.with." is 17 characters: the key starts at column 18.
  assert.is(
    await refused('stages.a.with.timeout=3'),
    '-S stages.a.with.timeout=3 (column 18): stages.a.with.timeout: unknown key (did you mean "timeout_s"?)',
  );
});

test('a misspelled key above the one set points at that segment, not into the file', async () => {
  assert.is(
    await refused('stages.a.wth.timeout_s=3'),
    '-S stages.a.wth.timeout_s=3 (column 13): stages.a.wth: unknown key (did you mean "with"?)',
  );
});

test('a value that is not YAML names the argument, the key and the value', async () => {
  assert.is(
    await refused('stages.a.with.timeout_s=[1'),
    '-S stages.a.with.timeout_s=[1 (column 30): stages.a.with.timeout_s: cannot read the value "[1": Flow sequence must end with a ]',
  );
  // A value of the wrong type points at the value.
  assert.is(
    await refused('stages.a.with.timeout_s=soon'),
    '-S stages.a.with.timeout_s=soon (column 28): stages.a.with.timeout_s: must be number',
  );
});

test.run();
