// Validation errors as tests compare them: `LINE:COL path: message` for each diagnostic.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UserError } from '../core/errors.js';
import { loadExperiment } from '../pipelines/config/load.js';

/** The positioned lines of a UserError; anything else is not a validation error and is thrown on. */
export function positioned(err: unknown): string[] {
  if (!(err instanceof UserError)) throw err;
  return err.diagnostics.map((d) => `${d.pos?.line}:${d.pos?.col} ${d.path}: ${d.message}`);
}

/** The diagnostics of `yaml` loaded as e.yaml in a project of its own (empty settings), or [] when it loads. */
export async function loadProblems(yaml: string): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'mlepipe-problems-'));
  await writeFile(join(dir, 'mlepipe.config.yaml'), '{}\n');
  await writeFile(join(dir, 'e.yaml'), yaml);
  try {
    await loadExperiment(join(dir, 'e.yaml'), { env: {} });
  } catch (err) {
    return positioned(err);
  }
  return [];
}
