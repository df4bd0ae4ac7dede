import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startReplayServer } from '../../test/llm/replay-server.js';
import { allSeeds } from '../../seeds/index.js';
import { describeSeed, seedDescription } from '../../seeds/describe.js';
import { LlmClient } from '../llm/client.js';
import { askStrategist, strategistProblems } from './strategist.js';
import { resolveModel } from '../../core/models.js';

const GOOD = {
  dna: {
    modality: 'tabular',
    task_type: 'classification',
    metric: 'accuracy',
    is_lower_better: false,
    dataset_stats: { sample_count: 8693, is_imbalanced: false },
    target_info: { type: 'label', cardinality: 2, distribution: 'balanced' },
  },
  scenarios: Array.from({ length: 5 }, (_, i) => ({
    domain: `d${i}`,
    scenario: `s${i}`,
    justification: 'rows of sensor readings per unit',
  })),
  chosen: 2,
  mutations: [
    { name: 'missingness', params: { rate: 0.1 } },
    { name: 'outliers', params: { rate: 0.05 } },
    { name: 'label_noise', params: { rate: 0.1 } },
  ],
  spec: {
    task_name: 'Pump failure triage',
    domain_context: 'water utility',
    n_samples: 120,
    target: { name: 'failure', kind: 'classification', classes: ['no', 'yes'] },
    metric: 'accuracy',
    feature_mapping: [{ name: 'pressure', generation_logic: 'normal(50, 10)' }],
    hidden_rule_logic: 'failure = 1[pressure * vibration + sin(temp) > 2] + noise',
    thresholds_logic: 'gold from the noise ceiling; silver forest; bronze linear; median majority',
  },
};

test('seed descriptions come from the facts, or from an MLE-bench data directory', async () => {
  const d = allSeeds().find((s) => s.id === 'spaceship-titanic')!;
  assert.match(describeSeed(d), 'scored by accuracy (higher is better)');
  assert.match(describeSeed(d), 'about 8,693 samples');
  const dir = await mkdtemp(join(tmpdir(), 'mlebench-'));
  await mkdir(join(dir, d.id, 'prepared', 'public'), { recursive: true });
  await writeFile(join(dir, d.id, 'prepared', 'public', 'description.md'), '# The real one\n');
  assert.is(await seedDescription(d, dir), '# The real one\n');
  assert.match(await seedDescription(d, '/nonexistent'), '# spaceship-titanic');
});

test('answers are checked: schema, sample range, classes', () => {
  assert.equal(strategistProblems(GOOD, [50, 200]), []);
  assert.equal(strategistProblems({ ...GOOD, spec: { ...GOOD.spec, n_samples: 500 } }, [50, 200]), [
    'spec.n_samples: 500 is outside [50, 200]',
  ]);
  assert.match(strategistProblems({ ...GOOD, scenarios: GOOD.scenarios.slice(0, 2) }, [50, 200])[0], 'scenarios');
});

test('malformed and invalid JSON go back with the errors; a rerun is served from the response cache', async () => {
  const s = await startReplayServer([
    { content: '```json\n{"dna": {"modality": "tabular",}\n```' },
    { content: JSON.stringify({ ...GOOD, spec: { ...GOOD.spec, n_samples: 999 } }) },
    { content: 'Here you go:\n```json\n' + JSON.stringify(GOOD) + '\n```' },
  ]);
  const cache = await mkdtemp(join(tmpdir(), 'mlepipe-llm-'));
  try {
    const client = () =>
      new LlmClient({
        name: 'qwen',
        spec: resolveModel({ provider: 'openai', base_url: s.url, model: 'Qwen/Qwen3-8B' }),
        cacheDir: cache,
      });
    const out = await askStrategist(client(), describeSeed(allSeeds()[0]), { samples: [50, 200], attempts: 3 });
    assert.ok(out.ok, out.errors.join('\n'));
    assert.is(out.attempts, 3);
    assert.equal(out.value, GOOD);
    assert.match(out.errors[0], 'the JSON does not parse');
    assert.match(out.errors[1], 'spec.n_samples: 999 is outside [50, 200]');
    // The repair request carries the model's answer and the errors.
    const third = s.requests[2].messages;
    assert.is(third.length, 5);
    assert.match(third[4].content, 'spec.n_samples: 999 is outside');
    assert.match(s.requests[0].messages[0].content, 'ROLE: data-strategist');
    const again = await askStrategist(client(), describeSeed(allSeeds()[0]), { samples: [50, 200], attempts: 3 });
    assert.equal(again.value, GOOD);
    assert.is(s.requests.length, 3, 'no new requests');
  } finally {
    await s.close();
  }
});

test.run();
