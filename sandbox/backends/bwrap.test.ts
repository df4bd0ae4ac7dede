import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_LIMITS } from '../types.js';
import { BWRAP_SPAWN, bwrapCommand } from './bwrap.js';

test("bwrap's own command line and environment name no host folder: the jail's binds travel on fd 3", () => {
  const cmd = bwrapCommand('/tmp/host-ws', '/tmp/host-task/public', DEFAULT_LIMITS, ['/usr/bin/python3', 'x.py']);
  assert.not.match(cmd.argv.join(' '), '/tmp/host');
  assert.equal(cmd.argv.slice(1), ['--args', '3', '--', '/usr/bin/python3', 'x.py']);
  assert.match(
    cmd.fd3!.toString(),
    '--bind\0/tmp/host-ws\0/workspace\0--ro-bind\0/tmp/host-task/public\0/workspace/public\0',
  );
  assert.equal(BWRAP_SPAWN, { env: { PATH: '/usr/local/bin:/usr/bin:/bin' }, cwd: '/' });
});

test('a virtual environment is mounted read-only where the interpreter expects it', () => {
  const python = {
    host: '/h/.venv/agent/bin/python',
    path: '/opt/mlepipe/agent/bin/python',
    binds: [['/h/.venv/agent', '/opt/mlepipe/agent']] as const,
  };
  const cmd = bwrapCommand('/tmp/host-ws', '/tmp/host-task/public', DEFAULT_LIMITS, [python.path, 'x.py'], python);
  const fd3 = cmd.fd3!.toString();
  assert.match(fd3, '--ro-bind\0/h/.venv/agent\0/opt/mlepipe/agent\0');
  // Mounted before the root is made read-only, so it stays read-only inside.
  assert.ok(fd3.indexOf('/opt/mlepipe/agent') < fd3.indexOf('--remount-ro'));
  assert.not.match(cmd.argv.join(' '), '/h/.venv');
});

test.run();
