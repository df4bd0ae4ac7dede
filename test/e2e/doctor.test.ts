import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cli, tmpProject } from '../helpers.js';

test('doctor finds the Debian interpreter with numpy, pandas and sklearn', async () => {
  const dir = await tmpProject({}, 'sandbox: { backend: process }\n');
  const r = await cli(['doctor', '--json'], { cwd: dir });
  const { checks } = JSON.parse(r.stdout);
  const py = checks.find((c: { name: string }) => c.name === 'python');
  assert.ok(py.ok, py.detail);
  assert.match(py.detail, 'numpy, pandas, sklearn');
  assert.is(r.exitCode, 0);
});

test('doctor exits 3 and prints the fix when something required is missing', async () => {
  const dir = await tmpProject({}, 'sandbox: { backend: docker }\npython: /nonexistent/python3\n');
  const r = await cli(['doctor'], { cwd: dir, env: { DOCKER_HOST: 'tcp://127.0.0.1:9' } });
  assert.is(r.exitCode, 3, r.stdout);
  assert.match(r.stdout, /✖ python\s+configured \/nonexistent\/python3: not found/);
  assert.match(r.stdout, 'fix: fix or remove python:');
  assert.match(r.stdout, /✖ docker\s+no engine at tcp:\/\/127.0.0.1:9/);
  assert.match(r.stdout, 'fix: apt-get install -y docker.io');
});

test.run();
