// test_fraction sizes the procedural backend's test sets; the llm backend's developer prompt fixes its own, so
// there the param is dropped before the key is computed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveGenerate } from './index.js';

test('test_fraction stays for the procedural backend and is dropped for the llm backend', () => {
  assert.equal(resolveGenerate({ backend: 'procedural', test_fraction: 0.2 }), {
    backend: 'procedural',
    test_fraction: 0.2,
  });
  assert.equal(resolveGenerate({ test_fraction: 0.2 }), { test_fraction: 0.2 });
  assert.equal(
    resolveGenerate({ backend: 'llm', model: 'm', test_fraction: 0.2 }),
    resolveGenerate({ backend: 'llm', model: 'm' }),
  );
});

test.run();
