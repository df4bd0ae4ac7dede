// `process`: a plain child process. No isolation at all (the step can read
// anything the user can, private/ included); only limits and cleanup. For
// machines without bubblewrap or Docker, and only when asked for by name.
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { jailEnv } from '../output.js';
import { launcherArgv, spawnJailed } from '../spawn.js';
import type { Backend, Session, SessionOptions } from '../types.js';
import { coldSession } from '../workspace.js';

export function processBackend(python: string): Backend {
  return {
    name: 'process',
    open: (opts: SessionOptions): Promise<Session> =>
      coldSession(
        'process',
        opts,
        (step, limits, { workspace }) =>
          spawnJailed(
            {
              env: jailEnv(limits.cpus, workspace),
              cwd: workspace,
              limits,
              backend: 'process',
              workspace,
              signal: opts.signal,
            },
            (cg) => ({
              argv: launcherArgv(python, limits, cg, workspace, step),
            }),
          ),
        {
          // The same ./public path as in the jails, as a link.
          async prepare({ workspace, pub }) {
            await rm(join(workspace, 'public'), { recursive: true });
            await symlink(pub, join(workspace, 'public'));
          },
        },
      ),
  };
}
