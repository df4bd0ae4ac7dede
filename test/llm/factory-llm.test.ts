// The four-role factory on an LLM, end to end through the generate and filter
// stages, against a local OpenAI-compatible server replaying scripted answers.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { outputsCommand } from '../../cli/commands/outputs.js';
import { runCommand } from '../../cli/commands/run.js';
import { memoryIO } from '../../cli/io.js';
import { allSeeds } from '../../seeds/index.js';
import { draftSpec } from '../../seeds/strategist.js';
import { descriptionMd, evaluatorScript, generateTaskEnvScript } from '../../tasks/roles.js';
import { closedPort, ROOT, tmpProject } from '../helpers.js';
import { startReplayServer, type ReplayServer } from './replay-server.js';

const dna = allSeeds().find((s) => s.id === 'spaceship-titanic')!;
// A spec whose reference teams' leaderboard has four distinct medal lines (on a few hundred test rows,
// teams can tie, and the filter's sanity rule then drops the task, which is not what this test is about).
const proc = draftSpec(dna, { seed: 1, index: 0 });

/** What a good model would answer for this spec, role by role. */
const strategistAnswer = {
  dna: {
    modality: 'tabular',
    task_type: 'classification',
    metric: 'accuracy',
    is_lower_better: false,
    dataset_stats: { sample_count: 8693, is_imbalanced: false },
    target_info: { type: 'label', cardinality: 2, distribution: 'balanced' },
  },
  scenarios: Array.from({ length: 5 }, (_, i) => ({
    domain: proc.domain.sector,
    scenario: `${proc.domain.scenario} ${i}`,
    justification: proc.domain.justification,
  })),
  chosen: 0,
  mutations: proc.mutations,
  spec: {
    task_name: proc.domain.scenario,
    domain_context: proc.domain.sector,
    n_samples: proc.n_train,
    target: { name: proc.target.name, kind: proc.target.kind, classes: proc.target.classes },
    metric: proc.metric,
    feature_mapping: (proc.features ?? []).map((f) => ({ name: f.name, generation_logic: f.dist ?? 'categorical' })),
    hidden_rule_logic:
      'outcome = quantile bins of (w . z + interactions + 1[z_k > t] + sin(f z_m) + categorical effect) + noise',
    thresholds_logic: 'gold from the noise ceiling, silver random forest, bronze linear model, median majority class',
  },
};

function script(): Parameters<typeof startReplayServer>[0] {
  const seen: Record<string, number> = {};
  const route = (body: ReplayServer['requests'][number]) => {
    const role = /^ROLE: (\S+)/.exec(body.messages[0].content)?.[1] ?? '?';
    const n = (seen[role] = (seen[role] ?? 0) + 1);
    if (role === 'data-strategist')
      return {
        content: n === 1 ? '```json\n{"dna": {,}}\n```' : '```json\n' + JSON.stringify(strategistAnswer) + '\n```',
      };
    if (role === 'ml-developer') {
      return {
        content:
          n === 1
            ? '```python\nimport sys\nraise RuntimeError("column mismatch in synthesis")\n```'
            : '```python\n' + generateTaskEnvScript(proc) + '\n```',
      };
    }
    if (role === 'mlops-engineer') return { content: '```python\n' + evaluatorScript(proc) + '\n```' };
    if (role === 'technical-writer') return { content: descriptionMd(proc, 'id,x\n1,a') };
    return { status: 400 };
  };
  return [route];
}

const EXP = (url: string) => `name: llm-factory
models:
  local: { provider: openai, base_url: "${url}", model: Qwen/Qwen3-8B, concurrency: 2, timeout_s: 10 }
stages:
  envs: { uses: generate, with: { backend: llm, model: local, seeds: [spaceship-titanic], count: 1 } }
  verified: { uses: filter, needs: [envs], with: { val: 0 } }
`;

const outputs = async (dir: string, node: string) => {
  const io = memoryIO();
  await outputsCommand(join(dir, 'e.yaml'), node, {}, io);
  return io.stdout[0];
};

test('a full task through all four roles, with a crashing script repaired and bad JSON repaired; it passes the contract checks and the filter', async () => {
  const s = await startReplayServer(script());
  try {
    const dir = await tmpProject({ 'e.yaml': EXP(s.url) });
    const io = memoryIO();
    assert.is(await runCommand(join(dir, 'e.yaml'), {}, io), 0, io.stderr.join('\n'));
    const roles = s.requests.map((r) => /^ROLE: (\S+)/.exec(r.messages[0].content)?.[1]);
    assert.equal(roles, [
      'data-strategist',
      'data-strategist',
      'ml-developer',
      'ml-developer',
      'mlops-engineer',
      'technical-writer',
    ]);
    assert.match(s.requests[3].messages.at(-1)!.content, 'RuntimeError: column mismatch in synthesis');
    assert.match(s.requests[1].messages.at(-1)!.content, 'the JSON does not parse');
    const envs = await outputs(dir, 'envs');
    const gen = JSON.parse(await readFile(join(envs, 'generation.json'), 'utf8'));
    assert.is(gen.evaluator_ok, 1, JSON.stringify(gen.tasks));
    const lock = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8'));
    assert.is(lock.nodes.envs.metrics.llm_requests, 6);
    assert.is(lock.nodes.envs.metrics.prompt_tokens, 60);
    const [id] = await readdir(join(envs, 'tasks'));
    const task = join(envs, 'tasks', id);
    const checked = JSON.parse(
      String((await execa('/usr/bin/python3', [join(ROOT, 'test', 'tasks', 'check_task.py'), task])).stdout),
    );
    assert.ok(checked.answer.score >= checked.answer.gold_threshold);
    assert.ok(checked.sample.score < checked.sample.gold_threshold);
    for (const [k, v] of Object.entries(checked.malformed as Record<string, { error?: string }>)) assert.ok(v.error, k);
    assert.is(JSON.parse(await readFile(join(task, 'task.json'), 'utf8')).generator, 'llm');
    const filter = JSON.parse(await readFile(join(await outputs(dir, 'verified'), 'filter.json'), 'utf8'));
    assert.equal(filter.counts, { input: 1, evaluator_ok: 1, sane: 1, unique: 1, train: 1, val: 0 });

    // A rerun of the node (its key changed by a setting the prompts do not see) is served from the response cache.
    const before = s.requests.length;
    const again = memoryIO();
    assert.is(
      await runCommand(join(dir, 'e.yaml'), { set: ['stages.envs.with.evaluator_attempts=4'] }, again),
      0,
      again.stderr.join('\n'),
    );
    assert.is(s.requests.length, before, 'zero new requests');
    const lock2 = JSON.parse(await readFile(join(dir, 'e.lock.json'), 'utf8'));
    assert.equal([lock2.nodes.envs.metrics.llm_requests, lock2.nodes.envs.metrics.llm_cached], [0, 6]);
  } finally {
    await s.close();
  }
});

test('an unreachable endpoint fails the node with a message that names it', async () => {
  const port = await closedPort();
  const url = `http://127.0.0.1:${port}/v1`;
  const dir = await tmpProject({ 'e.yaml': EXP(url).replace('timeout_s: 10 }', 'timeout_s: 10, retries: 0 }') });
  const io = memoryIO();
  // Returning at all is the point (the retries are bounded); a hang is reported by the runner. Started past
  // the preflight, which would refuse it, as a run whose endpoint goes away after it started.
  assert.is(await runCommand(join(dir, 'e.yaml'), { preflight: false }, io), 1);
  assert.match(io.stderr.join('\n'), `cannot reach model "local" (Qwen/Qwen3-8B) at ${url}`);
});

test('backend: llm needs a model', async () => {
  const dir = await tmpProject({
    'e.yaml': 'name: x\nstages:\n  envs: { uses: generate, with: { backend: llm, count: 1 } }\n',
  });
  try {
    await runCommand(join(dir, 'e.yaml'), {}, memoryIO());
    assert.unreachable();
  } catch (err) {
    assert.match((err as Error).message, 'stages.envs.with.backend: backend: llm needs model:');
  }
});

test.run();
