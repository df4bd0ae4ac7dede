// Loaded by test/run.mjs with --import for unit tests (the *.test.ts files beside the code): a unit test runs
// in its own Node process and nothing else, so that the unit lane stays fast and runs on a machine without
// Python environments, bubblewrap or Docker. Starting a process or reaching the Docker socket throws, and the
// file then fails even if a test caught the error (one that expects a command to fail would otherwise pass
// for the wrong reason). A test that needs any of these belongs under test/ (docs/testing.md).
import childProcess, { ChildProcess } from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

function refuse(what) {
  const message = `a unit test may not ${what}: move the test file under test/ (docs/testing.md)`;
  process.stderr.write(`[unit guard] ${message}\n`);
  process.exitCode = 1;
  process.on('exit', () => {
    process.exitCode = 1;
  });
  throw new Error(message);
}

const spawnOf = (options) => [options?.file, ...(options?.args ?? []).slice(1)].filter(Boolean).join(' ');
ChildProcess.prototype.spawn = function (options) {
  refuse(`start a process (${spawnOf(options)})`);
};
for (const name of ['spawnSync', 'execSync', 'execFileSync']) {
  childProcess[name] = (file) => refuse(`start a process (${String(file)})`);
}
syncBuiltinESMExports();

const connect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const path = typeof args[0] === 'object' && args[0] !== null ? args[0].path : undefined;
  if (typeof path === 'string' && path.endsWith('docker.sock')) refuse(`reach Docker (${path})`);
  return connect.apply(this, args);
};
