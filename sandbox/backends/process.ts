// `process`: a plain child process. No isolation at all (the step can read
// anything the user can, private/ included); only limits and cleanup. For
// machines without bubblewrap or Docker, and only when asked for by name.
import { rm, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { jailEnv } from '../output.js';
import { launcherArgv, spawnJailed } from '../spawn.js';
import { DEFAULT_LIMITS, type Backend, type Session, type SessionOptions } from '../types.js';
import { freshWorkspace, publicDir, removeWorkspace } from '../workspace.js';

export function processBackend(python: string): Backend {
  return {
    name: 'process',
    async open(opts: SessionOptions): Promise<Session> {
      const pub = await publicDir(opts.task);
      const workspace = await freshWorkspace();
      // The same ./public path as in the jails, as a link.
      await rm(join(workspace, 'public'), { recursive: true });
      await symlink(pub, join(workspace, 'public'));
      const base = { ...DEFAULT_LIMITS, ...opts.limits };
      return {
        backend: 'process',
        workspace,
        async run(step, over) {
          const limits = { ...base, ...over };
          return spawnJailed({ env: jailEnv(limits.cpus, workspace), cwd: workspace, limits, backend: 'process', workspace }, (cg) =>
            launcherArgv(python, limits, cg, workspace, step),
          );
        },
        close: () => removeWorkspace(workspace),
      };
    },
  };
}
