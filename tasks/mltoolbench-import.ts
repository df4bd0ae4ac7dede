// Importer for a released MLToolBench task_manifest.json and its instance
// folders: each instance becomes a task folder of our contract (docs/tasks.md).
// The manifest's field names vary between exports, so each fact is read from
// the first of a few names; what cannot be found is reported per instance.
import { existsSync } from 'node:fs';
import { cp, mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readJsonFile } from '../core/text.js';
import { writeTaskJson } from './taskjson.js';
import { UserError } from '../core/errors.js';

export interface ManifestEntry {
  id: string;
  template: string | null;
  split: string | null;
  config: string | null;
  metric: string | null;
  is_lower_better: boolean | null;
  seed: number | null;
  baseline: { mean: number; std: number | null } | null;
  raw: Record<string, unknown>;
}

const pick = (o: Record<string, unknown>, names: string[]): unknown =>
  names.map((n) => o[n]).find((v) => v !== undefined && v !== null);
const str = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : null);
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function direction(o: Record<string, unknown>): boolean | null {
  const lower = pick(o, ['is_lower_better', 'lower_is_better']);
  if (typeof lower === 'boolean') return lower;
  const higher = pick(o, ['higher_is_better', 'greater_is_better']);
  if (typeof higher === 'boolean') return !higher;
  const d = str(pick(o, ['direction', 'metric_direction', 'goal']));
  if (d && /^(min|minimi[sz]e|lower|down)/i.test(d)) return true;
  if (d && /^(max|maximi[sz]e|higher|up)/i.test(d)) return false;
  return null;
}

/** The instances a manifest lists, or a message saying why it cannot be read as one. */
export async function readSuiteManifest(path: string): Promise<ManifestEntry[]> {
  const doc = (await readJsonFile(path)) as unknown;
  const list = Array.isArray(doc)
    ? doc
    : ((doc as Record<string, unknown>)?.instances ?? (doc as Record<string, unknown>)?.tasks);
  if (!Array.isArray(list))
    throw new UserError(
      `${path}: expected a list of instances, or an object with "instances" (or "tasks") holding one`,
    );
  return list.map((item, i) => {
    const o = (item ?? {}) as Record<string, unknown>;
    const id = str(pick(o, ['instance_id', 'id', 'task_id']));
    if (!id) throw new UserError(`${path}: instance ${i} has no instance_id (or id, task_id)`);
    const b = pick(o, ['starter_baseline', 'baseline', 'starter_score']);
    const baseline =
      num(b) !== null
        ? { mean: b as number, std: null }
        : b && typeof b === 'object' && num((b as Record<string, unknown>).mean) !== null
          ? { mean: (b as Record<string, number>).mean, std: num((b as Record<string, unknown>).std) }
          : null;
    return {
      id,
      raw: o,
      baseline,
      template: str(pick(o, ['template_id', 'template'])),
      split: str(pick(o, ['split', 'partition'])),
      config: str(pick(o, ['configuration', 'condition', 'config'])),
      metric: str(pick(o, ['native_metric', 'metric'])),
      is_lower_better: direction(o),
      seed: num(pick(o, ['generation_seed', 'seed'])),
    };
  });
}

const TEST_SCRIPTS = ['private/evaluator.py', 'evaluator.py', 'test.py', 'evaluate.py', 'eval.py'];

/** What an instance folder lacks to be a task, or null when it has it all. */
export function instanceProblem(dir: string): string | null {
  if (!existsSync(dir)) return `no folder ${dir}`;
  if (!existsSync(join(dir, 'public'))) return `${dir} has no public/`;
  if (!TEST_SCRIPTS.some((s) => existsSync(join(dir, s))))
    return `${dir} has no test script (one of ${TEST_SCRIPTS.join(', ')})`;
  return null;
}

/** Copies one instance into dest: public/ as it is, everything else under private/, the test script as private/evaluator.py. */
export async function importInstance(e: ManifestEntry, src: string, dest: string): Promise<void> {
  await mkdir(join(dest, 'private'), { recursive: true });
  await cp(join(src, 'public'), join(dest, 'public'), { recursive: true });
  for (const entry of await readdir(src)) {
    if (entry === 'public') continue;
    await cp(join(src, entry), entry === 'private' ? join(dest, 'private') : join(dest, 'private', entry), {
      recursive: true,
    });
  }
  const script = TEST_SCRIPTS.find((s) => existsSync(join(src, s)))!;
  if (script !== 'private/evaluator.py') await cp(join(src, script), join(dest, 'private', 'evaluator.py'));
  // The author-side condition stays private: an agent sees only the opaque id.
  await writeFile(join(dest, 'private', 'manifest_entry.json'), JSON.stringify(e.raw, null, 2) + '\n');
  if (e.baseline)
    await writeFile(
      join(dest, 'private', 'spec.json'),
      JSON.stringify({ starter_score: e.baseline.mean, starter_std: e.baseline.std }, null, 1) + '\n',
    );
  await writeTaskJson(dest, {
    id: e.id,
    generator: 'mltoolbench-import',
    split: e.split,
    template: e.template,
    metric: e.metric,
    is_lower_better: e.is_lower_better,
    seed: e.seed,
    ...(e.baseline ? { baseline: e.baseline } : {}),
  });
}
