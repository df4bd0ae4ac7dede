// A warm jail handed from one session to the next: everything the first left
// behind (processes, files in the workspace, /tmp and /dev/shm under locked
// modes, System V IPC objects) is gone before the second runs, and the
// second sees only its own task. Run on both warm backends.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { envInstalled, pythonEnv } from '../../core/python.js';
import { createSandbox, type Sandbox, type Session } from '../../sandbox/index.js';

const AGENT = pythonEnv('agent');

const LEAVE = `
import ctypes, os, time
os.makedirs('/tmp/a/b', exist_ok=True)
open('/tmp/a/b/secret', 'w').write('A-SECRET')
os.chmod('/tmp/a/b', 0)
os.chmod('/tmp/a', 0o500)
open('/workspace/left.txt', 'w').write('A-SECRET')
os.makedirs('/workspace/locked/x')
os.chmod('/workspace/locked', 0)
try:
    open('/dev/shm/seg', 'w').write('A-SECRET')
    print('shm file written')
except OSError as e:
    print('no /dev/shm file:', e)
libc = ctypes.CDLL(None)
print('shmid', libc.shmget(0x1234, 4096, 0o1000 | 0o666), 'msqid', libc.msgget(0x1235, 0o1000 | 0o666))
# A daemon, detached from the step, writing into the workspace.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            try:
                open('/workspace/heartbeat', 'a').write('x')
            except OSError:
                pass
            time.sleep(0.02)
    os._exit(0)
time.sleep(0.3)
`;

const CHECK = `
import os, sys
me = os.path.basename(sys.argv[0])
left = [os.path.join(d, n) for d in ('/tmp', '/dev/shm') if os.path.isdir(d) for n in os.listdir(d)]
left += [n for n in os.listdir('/workspace') if n not in ('public', me)]
procs = [p for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid(), os.getppid())]
ipc = [l for k in ('shm', 'msg', 'sem') for l in open('/proc/sysvipc/' + k).read().splitlines()[1:] if l.strip()]
print('LEFT', left, procs, ipc)
print('PUBLIC', sorted(os.listdir('/workspace/public')))
`;

async function task(root: string, name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(join(dir, 'public'), { recursive: true });
  await writeFile(join(dir, 'public', `${name}.csv`), 'id,y\n1,0\n');
  return dir;
}

for (const backend of ['bwrap', 'docker'] as const) {
  const t = suite(`jail reuse: warm ${backend}`);
  let root: string;
  let sandbox: Sandbox;

  t.before(async () => {
    assert.ok(envInstalled(AGENT), `the agent environment is not installed: ${AGENT.fix}`);
    root = await mkdtemp(join(tmpdir(), 'mlepipe-reuse-'));
    sandbox = createSandbox({ backend, warm: true, poolSize: 1, python: AGENT.python, warn: () => {} });
  });
  t.after(async () => {
    await sandbox?.shutdown();
    await rm(root, { recursive: true, force: true });
  });

  const step = async (s: Session, name: string, script: string) => {
    await writeFile(join(s.workspace, name), script);
    const r = await s.run({ file: name }, { timeoutMs: 30_000 });
    assert.is(r.exitCode, 0, r.stderr);
    return r.stdout;
  };

  t('the next session gets the same jail with nothing of the last one in it', async () => {
    const a = await sandbox.open({ task: await task(root, 'taskA') });
    assert.is(a.backend, `warm-${backend}`);
    const left = await step(a, 'leave.py', LEAVE);
    assert.match(left, /shmid \d+ msqid \d+/);
    await a.close();
    const b = await sandbox.open({ task: await task(root, 'taskB') });
    try {
      const seen = await step(b, 'check.py', CHECK);
      // The jail's workspace folder on the host is the slot's: the same one means the same jail.
      assert.is(b.workspace, a.workspace, 'the jail was reused');
      assert.match(seen, /^LEFT \[\] \[\] \[\]$/m);
      assert.match(seen, /^PUBLIC \['taskB\.csv'\]$/m);
      // Nothing keeps writing into the (host side of the) workspace either.
      await new Promise((r) => setTimeout(r, 300));
      assert.equal((await readdir(b.workspace)).sort(), ['check.py', 'public']);
    } finally {
      await b.close();
    }
  });

  t.run();
}
