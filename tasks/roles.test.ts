import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { selectSeeds } from '../seeds/index.js';
import { draftSpec } from '../seeds/strategist.js';
import { csvColumns } from './csv-header.js';
import { descriptionMd, evaluatorScript, generateTaskEnvScript, leakageProblems } from './roles.js';
import { sanityProblem } from './sanity.js';
import { submissionColumns } from './spec.js';

const spec = draftSpec(selectSeeds('mlebench-tabular')[0], { seed: 3, index: 0 });

test('the leakage check catches hidden names, the label column in test data and rule values', () => {
  const clean = descriptionMd(spec, 'id,x\n1,a');
  assert.equal(
    leakageProblems(spec.target.name, clean, csvColumns('id,a,b'), ['train.csv', 'test.csv'], '{"w": 0.123456}'),
    [],
  );
  const leaky = clean + '\nThe answers are in answer.csv; the weight is 0.123456.';
  assert.equal(
    leakageProblems(
      spec.target.name,
      leaky,
      csvColumns(`id,a,${spec.target.name}`),
      ['train.csv', 'threshold.json'],
      '{"w": 0.123456}',
    ),
    [
      'description mentions answer.csv',
      `public test.csv has the label column ${spec.target.name}`,
      'public file threshold.json has a hidden name',
      'description contains hidden-rule value 0.123456',
    ],
  );
});

test('a quoted header cell holding a comma is one column: the label column is found in it', () => {
  assert.equal(csvColumns('id,"price, usd",note\n1,2,3\n'), ['id', 'price, usd', 'note']);
  assert.equal(csvColumns('\ufeffid,"a ""b"", c"\n'), ['id', 'a "b", c']);
  assert.equal(
    leakageProblems(
      'price, usd',
      descriptionMd(spec, 'id,x\n1,a'),
      csvColumns('id,"price, usd"\n1,2\n'),
      ['test.csv'],
      '{}',
    ),
    ['public test.csv has the label column price, usd'],
  );
});

test('scripts carry the spec and the fixed evaluation config', () => {
  const gen = generateTaskEnvScript(spec);
  assert.match(gen, 'def main(spec, out)');
  assert.match(gen, JSON.stringify(spec.ids.slice(0, 2)).slice(1, -1));
  const ev = evaluatorScript(spec);
  assert.match(ev, `"columns":${JSON.stringify(submissionColumns(spec))}`);
  assert.match(ev, `"metric":"${spec.metric}"`);
  assert.not.match(ev, '__CONFIG__');
});

test('the sanity rule: strictly monotonic in the metric direction, gold beats the sample', () => {
  const th = { gold_threshold: 0.9, silver_threshold: 0.8, bronze_threshold: 0.7, median_threshold: 0.5 };
  assert.is(sanityProblem(th, 0.3, false), null);
  assert.match(
    sanityProblem({ ...th, bronze_threshold: 0.8 }, 0.3, false)!,
    'silver (0.8) is not strictly better than bronze (0.8)',
  );
  assert.match(sanityProblem(th, 0.95, false)!, 'not strictly better than the sample');
  const lower = { gold_threshold: 1, silver_threshold: 2, bronze_threshold: 3, median_threshold: 4 };
  assert.is(sanityProblem(lower, 5, true), null);
  assert.match(sanityProblem(lower, 5, false)!, 'gold (1) is not strictly better than silver (2)');
});

test.run();
