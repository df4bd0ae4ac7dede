// The sandbox service runs the agent's code and holds the tasks' answers, so
// it answers only requests that carry its token, `mlepipe sandbox serve`
// refuses an address other machines reach without one, and the exported
// launch.sh serves on this machine's own address behind a fresh token, which
// the job's workers get (and the Python client sends). launch.sh also writes
// checkpoints and verl's metrics file to absolute paths under one output folder.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { memoryIO } from '../../cli/io.js';
import { sandboxServeCommand } from '../../cli/commands/sandbox-serve.js';
import { UserError } from '../../core/errors.js';
import { launchScript } from '../../gpu/verl/export.js';
import { startSandboxService } from '../../gpu/verl/service.js';
import type { Sandbox } from '../../sandbox/index.js';
import { ROOT } from '../helpers.js';

const PY = join(ROOT, '.venv', 'verl', 'bin', 'python');

test('the service answers only requests with its token; the Python client sends MLEPIPE_SANDBOX_TOKEN', async () => {
  const tasksDir = await mkdtemp(join(tmpdir(), 'tok-tasks-'));
  // No task is ever opened: the sandbox is never reached.
  const service = await startSandboxService({
    sandbox: {} as Sandbox,
    tasksDir,
    reward: 'format',
    python: 'python3',
    memoryMb: 256,
    starter: async () => null,
    token: 'secret-token',
  });
  try {
    const post = (headers: Record<string, string>) =>
      fetch(`${service.url}/open`, { method: 'POST', headers, body: JSON.stringify({ task: 'none' }) });
    assert.is((await post({})).status, 401);
    assert.is((await post({ authorization: 'Bearer wrong-token!' })).status, 401);
    // With the token the request reaches the route, which finds no such task.
    assert.is((await post({ authorization: 'Bearer secret-token' })).status, 400);
    const client = `import sys; sys.path.insert(0, "gpu/verl")
from mlepipe_verl.service import SandboxService, ServiceError
try:
    SandboxService("${service.url}").open("none")
except ServiceError as e:
    print(e)`;
    const withToken = await execa(PY, ['-c', client], { cwd: ROOT, env: { MLEPIPE_SANDBOX_TOKEN: 'secret-token' } });
    assert.match(withToken.stdout, '400');
    const without = await execa(PY, ['-c', client], { cwd: ROOT, env: { MLEPIPE_SANDBOX_TOKEN: '' } });
    assert.match(without.stdout, '401');
  } finally {
    await service.close();
  }
});

test('sandbox serve refuses an address other machines reach without a token', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tok-export-'));
  await writeFile(join(dir, 'sandbox.json'), JSON.stringify({ reward: 'format', memory_mb: 256 }));
  const err = await sandboxServeCommand({ export: dir, host: '0.0.0.0' }, memoryIO({})).catch((e: unknown) => e);
  assert.ok(err instanceof UserError, String(err));
  assert.match((err as Error).message, 'MLEPIPE_SANDBOX_TOKEN');
});

test('launch.sh: a token, no 0.0.0.0, absolute checkpoint, metrics and TensorBoard paths; bash accepts it', async () => {
  const script = launchScript(['trainer.default_local_dir=checkpoints', 'trainer.val_before_train=false']);
  assert.not.match(script, '0.0.0.0');
  assert.match(script, 'MLEPIPE_SANDBOX_TOKEN');
  assert.match(script, '\\"MLEPIPE_SANDBOX_TOKEN\\": \\"$MLEPIPE_SANDBOX_TOKEN\\"');
  assert.match(script, '"trainer.default_local_dir=$OUT/checkpoints"');
  assert.match(script, '\\"VERL_FILE_LOGGER_PATH\\": \\"$OUT/metrics.jsonl\\"');
  assert.match(script, '\\"TENSORBOARD_DIR\\": \\"$OUT/tensorboard\\"');
  assert.not.match(script, '"trainer.default_local_dir=checkpoints"');
  const file = join(await mkdtemp(join(tmpdir(), 'tok-launch-')), 'launch.sh');
  await writeFile(file, script);
  const r = await execa('bash', ['-n', file], { reject: false });
  assert.is(r.exitCode, 0, r.stderr);
});

test.run();
