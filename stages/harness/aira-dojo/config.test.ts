import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { HarnessRun } from '../adapter.js';
import { EXP_DIR, experimentFiles, solverDefaults, writeRunConfig } from './config.js';

const exp = (operators: string, client: string) =>
  `# @package _global_\ndefaults:\n  - override /interpreter: jupyter\n  - override /solver: mlebench/greedy\n  - override /benchmark: mlebench/lite\n  - override /solver/operators/mlebench@solver.operators:\n    - ${operators}/draft\n  - override /solver/client@solver.operators.draft.llm.client: ${client}\n`;

async function tree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'aira-config-'));
  for (const [f, text] of Object.entries(files)) {
    await mkdir(join(root, f, '..'), { recursive: true });
    await writeFile(join(root, f), text);
  }
  return root;
}

test("the overlay's files of the solver are read; they may differ only in the model they talk to", async () => {
  const root = await tree({
    [`overlay/${EXP_DIR}/aide_greedy_qwen3_8b.yaml`]: exp('aide_operators', 'litellm_qwen3_8b'),
    [`overlay/${EXP_DIR}/aide_greedy_qwen3_14b.yaml`]: exp('aide_operators', 'litellm_qwen3_14b'),
    [`overlay/${EXP_DIR}/aira_greedy_qwen3_8b.yaml`]: exp('aira_operators', 'litellm_qwen3_8b'),
    [`checkout/${EXP_DIR}/aide_greedy_o3.yaml`]: exp('mine', 'litellm_o3'),
  });
  const settings = { solver: 'aide_greedy', overlay: join(root, 'overlay'), checkout: join(root, 'checkout') };
  const files = await experimentFiles(settings);
  assert.equal(
    files.map((f) => f.split('/').pop()),
    ['aide_greedy_qwen3_14b.yaml', 'aide_greedy_qwen3_8b.yaml'],
  );
  const defaults = await solverDefaults(files);
  assert.equal(defaults, [
    { 'override /interpreter': 'jupyter' },
    { 'override /solver': 'mlebench/greedy' },
    { 'override /solver/operators/mlebench@solver.operators': ['aide_operators/draft'] },
  ]);
  // Without an overlay, the checkout's own experiment.
  const own = await solverDefaults(await experimentFiles({ ...settings, overlay: undefined }));
  assert.equal(own[2], { 'override /solver/operators/mlebench@solver.operators': ['mine/draft'] });
  await writeFile(join(root, 'overlay', EXP_DIR, 'aide_greedy_qwen3_30b.yaml'), exp('aira_operators', 'x'));
  await solverDefaults(await experimentFiles(settings)).then(
    () => assert.unreachable('files that disagree were accepted'),
    (err: Error) => assert.match(err.message, 'differ'),
  );
});

test('the run config: python interpreter, no benchmark, our client for every operator, the task and limits', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'aira-run-'));
  const run = {
    dir,
    seed: 2,
    layout: '/data/layout',
    competition: { id: 'toy' },
    policy: { name: 'p', baseUrl: 'http://127.0.0.1:1/v1', model: 'm' },
    settings: { solver: 'aide_greedy', timePerRunS: 60, overrides: { step_limit: 4 } },
  } as unknown as HarnessRun;
  const config = await writeRunConfig(run, [{ 'override /interpreter': 'jupyter' }, { 'override /solver': 'g' }]);
  const text = await readFile(join(config, '_exp', 'mlepipe.yaml'), 'utf8');
  assert.ok(text.startsWith('# @package _global_\n'));
  const e = parse(text);
  assert.equal(e.defaults.slice(0, 3), [
    { 'override /interpreter': 'python' },
    { 'override /solver': 'g' },
    { 'override /task': 'mlebench/_default' },
  ]);
  assert.is(e.defaults.length, 7);
  assert.equal([e.task.name, e.task.cache_dir, e.metadata.seed], ['toy', '/data/layout', 2]);
  assert.equal(e.solver, { time_limit_secs: 60, step_limit: 4 });
  assert.equal([e.logger.use_wandb, e.logger.write_env_vars], [false, false]);
  const client = parse(await readFile(join(config, 'solver', 'client', 'mlepipe_policy.yaml'), 'utf8'));
  assert.equal([client.base_url, client.model_id], ['http://127.0.0.1:1/v1', 'm']);
});

test.run();
