// `release: { checkout: }` on eval and grpo: the released texts are read from
// the checkout (a fixture written here, in other words than the release's),
// change the prompt and the node key, and a checkout that is missing or holds
// no texts is refused where it is written, or fails the node naming the file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reactMessages } from '../../agents/scaffolds/react/prompt.js';
import { StageFailure } from '../../core/errors.js';
import { defaultPython } from '../../core/python.js';
import { loadExperiment } from '../../pipelines/config/load.js';
import { compileGraph } from '../../pipelines/compile/graph.js';
import { computeKeys } from '../../pipelines/compile/keys.js';
import { RELEASE_TEXTS_FILE, releaseOptions, releaseTextMetrics } from '../../stages/shared/release-checkout.js';
import { positioned } from '../diagnostics.js';

const fixture = (greeting: string) =>
  [
    'import nothing_that_exists  # parsed, never imported',
    `SYSTEM_PROMPT = """${greeting} You write a model. Date: """`,
    'task_specific_prompt = """## Competition ID: {id}\n{task_description}\nAt {data_root}/{id}/prepared/public/\n"""',
    'user_prompt_template = "Go.\\n{specific_task_description}\\nTurns: {max_llm_calls}"',
    'OTHER = 3',
    '',
  ].join('\n');

async function experiment(release: string, aGreeting = 'Hello.'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-release-checkout-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  for (const [name, text] of [
    ['a', fixture(aGreeting)],
    ['b', fixture('Good day.')],
    ['empty', 'SYSTEM_PROMPT = "only one"\n'],
  ]) {
    await mkdir(join(dir, name, 'examples', 'deepresearch'), { recursive: true });
    await writeFile(join(dir, name, RELEASE_TEXTS_FILE), text);
  }
  await writeFile(
    join(dir, 'e.yaml'),
    'name: e\nstages:\n  t: { uses: generate, with: { count: 1 } }\n' +
      `  ev:\n    uses: eval\n    needs: [t]\n    with: { policy: "scripted:forest", prompt_format: sandmle-release, ${release} }\n`,
  );
  return dir;
}

async function evalKey(release: string, aGreeting?: string): Promise<string> {
  const dir = await experiment(release, aGreeting);
  try {
    const exp = await loadExperiment(join(dir, 'e.yaml'), { env: {} });
    const g = await computeKeys(exp, compileGraph(exp), {
      python: async () => ({ lock: 'a'.repeat(64), python: '3.11' }),
    });
    return g.nodes.get('ev')!.key;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function problems(release: string): Promise<string[]> {
  try {
    await evalKey(release);
  } catch (err) {
    return positioned(err);
  }
  return [];
}

test('a checkout changes the node key by its texts; the same texts keep it', async () => {
  const own = await evalKey('release: { pruning: release }');
  const a = await evalKey('release: { checkout: a }');
  assert.is.not(a, own);
  assert.is(await evalKey('release: { checkout: a }'), a);
  assert.is.not(await evalKey('release: { checkout: b }'), a);
  // The same path holding other texts is another key.
  assert.is.not(await evalKey('release: { checkout: a }', 'Good evening.'), a);
  assert.is.not(await evalKey('release: { checkout: a, date: "2031-05-06" }'), a);
  assert.is.not(await evalKey('release: { observations: mlepipe }'), own);
});

test('a missing checkout, one without the texts, and release: outside the released format are refused where written', async () => {
  const missing = await problems('release: { checkout: nowhere }');
  assert.ok(
    missing.some((x) =>
      /^7:\d+ stages\.ev\.with\.release\.checkout: .*nowhere\/examples\/deepresearch\/custom_evaluate\.py does not exist/.test(
        x,
      ),
    ),
    missing.join('\n'),
  );
  const empty = await problems('release: { checkout: empty }');
  assert.ok(
    empty.some((x) =>
      /^7:\d+ stages\.ev\.with\.release\.checkout: .*custom_evaluate\.py: no module-level string assigned to task_specific_prompt, user_prompt_template/.test(
        x,
      ),
    ),
    empty.join('\n'),
  );
  const dateAlone = await problems('release: { date: "2031-05-06" }');
  assert.ok(
    dateAlone.some((x) => /stages\.ev\.with\.release\.date: date: ends the released system prompt/.test(x)),
    dateAlone.join('\n'),
  );
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-release-checkout-'));
  try {
    await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
    await writeFile(
      join(dir, 'e.yaml'),
      'name: e\nstages:\n  t: { uses: generate, with: { count: 1 } }\n  ev:\n    uses: eval\n    needs: [t]\n    with: { policy: "scripted:forest", release: { pruning: release } }\n',
    );
    const e = await loadExperiment(join(dir, 'e.yaml'), { env: {} }).then(
      () => [],
      (err: unknown) => positioned(err),
    );
    assert.ok(
      e.some((x) => /^7:\d+ stages\.ev\.with\.release: release: sets how prompt_format: sandmle-release/.test(x)),
      e.join('\n'),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("the node's prompt is the checkout's, filled in; its metrics say which text; a file gone by run time fails the node by name", async () => {
  const dir = await experiment('release: { checkout: a }');
  try {
    const p = { prompt_format: 'sandmle-release' as const, release: { checkout: 'a', date: '2031-05-06' } };
    const options = (await releaseOptions(p, dir, defaultPython()))!;
    const task = { id: 'cactus', description: 'Find it.', files: ['train.csv'] };
    const [system, user] = reactMessages(
      task,
      { maxTurns: 9, stepSeconds: 60 },
      { options, datasetDir: '/workspace/public' },
    );
    assert.is(system.content, 'Hello. You write a model. Date: 2031-05-06');
    assert.is(
      user.content,
      'Go.\n## Competition ID: cactus\nFind it.\n\n## Files Provided in **/workspace/public**:\n- **/workspace/public/train.csv**\nAt /workspace/public/\n\nTurns: 9',
    );
    const metrics = releaseTextMetrics(options);
    assert.is(metrics.release_text, join(dir, 'a', RELEASE_TEXTS_FILE));
    assert.match(String(metrics.release_text_sha256), /^[0-9a-f]{64}$/);
    assert.equal(releaseTextMetrics(await releaseOptions({ prompt_format: 'sandmle-release' }, dir, defaultPython())), {
      release_text: 'project wording',
    });
    assert.is(await releaseOptions({ prompt_format: 'mlepipe' }, dir, defaultPython()), undefined);
    await rm(join(dir, 'a', RELEASE_TEXTS_FILE));
    const err = await releaseOptions(p, dir, defaultPython()).catch((e: unknown) => e);
    assert.instance(err, StageFailure);
    assert.match(
      (err as Error).message,
      /release\.checkout: .*a\/examples\/deepresearch\/custom_evaluate\.py: cannot be read/,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test.run();
