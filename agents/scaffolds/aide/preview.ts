// What the jail holds, asked of the jail itself once a search: a preview of the task's public files (AIDE's data
// overview, written by agents/prompts/aide/preview.py) and the Python distributions installed there, which the
// prompts list instead of a fixed set of package names.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { assetText } from '../../../core/assets.js';
import type { Session } from '../../../sandbox/index.js';

export interface JailView {
  preview: string;
  packages: string[];
}

const PREVIEW_TIMEOUT_MS = 120_000;

/** Runs the preview script in the session; a failure leaves a note in place of the preview and no packages. */
export async function viewJail(session: Session, timeoutMs = PREVIEW_TIMEOUT_MS): Promise<JailView> {
  const rel = join('.aide', 'preview.py');
  await mkdir(join(session.workspace, '.aide'), { recursive: true });
  await writeFile(join(session.workspace, rel), assetText('agents/prompts/aide/preview.py'));
  const r = await session.run({ file: rel }, { timeoutMs });
  try {
    const v = JSON.parse(r.stdout) as Partial<JailView>;
    return {
      preview: typeof v.preview === 'string' ? v.preview : '(no preview)',
      packages: Array.isArray(v.packages) ? v.packages.filter((p): p is string => typeof p === 'string') : [],
    };
  } catch {
    const why = r.timedOut ? 'timed out' : `exit code ${r.exitCode}: ${r.stderr.trim().split('\n').pop() ?? ''}`;
    return { preview: `(no preview: the preview script ${why})`, packages: [] };
  }
}

/** The installed distributions as the prompt names them (all of them, up to 300). */
export function packagesText(packages: readonly string[]): string {
  if (!packages.length) return 'the Python standard library (the installed packages could not be listed)';
  const shown = packages.slice(0, 300).map((p) => `\`${p}\``);
  return packages.length > 300 ? `${shown.join(', ')} and ${packages.length - 300} more` : shown.join(', ');
}
