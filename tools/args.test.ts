// Tool arguments: typed from `k=v`, checked against the schema, every problem named.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UserError } from '../core/errors.js';
import { checkArgs, functionDeclarations, getTool, listTools, parseArgPairs } from './index.js';

const message = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    assert.instance(e, UserError);
    return (e as Error).message;
  }
  throw new Error('expected a UserError');
};

test('the registry: 7 shared, 12 tabular, 15 time-series, 17 NLP, 8 vision, 8 graph tools; unique names; required arguments declared', () => {
  const counts: Record<string, number> = {};
  for (const t of listTools()) counts[t.domain] = (counts[t.domain] ?? 0) + 1;
  assert.equal(counts, { shared: 7, tabular: 12, 'time-series': 15, nlp: 17, vision: 8, graph: 8 });
  const names = listTools().map((t) => t.name);
  assert.is(new Set(names).size, names.length);
  for (const t of listTools()) for (const r of t.args.required) assert.ok(t.args.properties[r], `${t.name}: ${r}`);
  assert.equal(
    listTools('shared')
      .map((t) => t.name)
      .slice(0, 2),
    ['discover_log_metrics', 'extract_training_metric_series'],
  );
  assert.match(
    message(() => listTools('tabluar')),
    'did you mean "tabular"',
  );
});

test('pairs are typed by the schema and defaults filled in', () => {
  const spec = getTool('trace_tensor_shapes');
  assert.equal(parseArgPairs(spec, ['path=m.py', 'model=Net', 'input_shape=2, 3,32,32']), {
    dtype: 'float32',
    path: 'm.py',
    model: 'Net',
    input_shape: [2, 3, 32, 32],
  });
  assert.equal(parseArgPairs(getTool('detect_outliers'), ['path=a=b.csv', 'k=3']), { path: 'a=b.csv', k: 3 });
  assert.equal(
    parseArgPairs(getTool('detect_train_test_overlap'), ['train=a.csv', 'test=b.csv', 'ignore=id,row']).ignore,
    ['id', 'row'],
  );
});

test('bad arguments: each named, with a suggestion for a typo', () => {
  const spec = getTool('detect_outliers');
  const m = message(() => parseArgPairs(spec, ['pth=x.csv', 'k=many']));
  assert.match(m, 'detect_outliers: argument "pth": unknown (did you mean "path"?)');
  assert.match(m, 'argument "k": must be a number, not "many"');
  assert.match(m, 'argument "path": missing');
  assert.match(
    message(() => parseArgPairs(spec, ['path'])),
    '--arg path: expected NAME=VALUE',
  );
  assert.match(
    message(() => checkArgs(getTool('acf'), { path: 'a', nlags: 2.5 })),
    'argument "nlags": must be an integer',
  );
  assert.match(
    message(() => checkArgs(getTool('acf'), { path: 'a', nlags: 0 })),
    'must be at least 1',
  );
  assert.match(
    message(() => checkArgs(getTool('trace_tensor_shapes'), { path: 'a', model: 'M', input_shape: [2, 'x'] })),
    'every item must be an integer, not "x"',
  );
  assert.match(
    message(() =>
      checkArgs(getTool('trace_tensor_shapes'), { path: 'a', model: 'M', input_shape: [2], dtype: 'float23' }),
    ),
    'did you mean "float32"',
  );
});

test('an unknown tool gets the nearest name', () => {
  assert.match(
    message(() => getTool('detect_outlier')),
    'unknown tool "detect_outlier" (did you mean "detect_outliers"?)',
  );
  assert.match(
    message(() => getTool('stationarity_test')),
    'did you mean "stationarity_test_adf"',
  );
});

test("function declarations carry each tool's schema for a chat policy", () => {
  const decl = functionDeclarations(listTools('graph'));
  assert.is(decl.length, 8);
  assert.equal(decl[0].function.parameters.required, ['edges']);
  assert.match(decl[0].function.description, /^graph diagnostic; returns node and edge counts/);
});

test.run();
