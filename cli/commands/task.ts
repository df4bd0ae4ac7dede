import { existsSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { UserError } from '../../core/errors.js';
import { displayPath } from '../../core/paths.js';
import { readJsonFile } from '../../core/text.js';
import { defaultPython } from '../../core/python.js';
import { loadSettings } from '../../pipelines/config/settings.js';
import { runEvaluator } from '../../tasks/evaluate.js';
import { findReleaseTasks, importSandmleTask } from '../../tasks/importer.js';
import { sanityProblem } from '../../tasks/sanity.js';
import { tasksIn } from '../../tasks/taskjson.js';
import type { IO } from '../io.js';

/** A JSON file of the task, or undefined when it does not exist; one that does not parse is a positioned error. */
async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  if (!existsSync(path)) return undefined;
  return (await readJsonFile(displayPath(path))) as Record<string, unknown>;
}

/**
 * `mlepipe task show DIR [--json]`: what a task is, its thresholds, files and the sample's score; for a folder
 * of tasks, the tasks in it.
 */
export async function taskShowCommand(dir: string, args: { json?: boolean }, io: IO): Promise<number> {
  const task = await readJson(join(dir, 'task.json'));
  if (!task) return showFolder(dir, args, io);
  const th = (await readJson(join(dir, 'private', 'threshold.json'))) as Record<string, number> | undefined;
  const settings = await loadSettings(process.cwd(), io.env);
  const graded = await runEvaluator(resolve(dir), defaultPython(settings.python));
  const sane = graded.ok ? sanityProblem(graded, graded.score, graded.is_lower_better) : 'not graded';
  const publicFiles = (await readdir(join(dir, 'public'), { recursive: true })).sort();
  if (args.json) {
    io.out(
      JSON.stringify(
        { task, thresholds: th ?? null, sample: graded, sanity: sane ?? 'ok', public: publicFiles },
        null,
        2,
      ),
    );
    return 0;
  }
  const t = task as Record<string, unknown> & {
    domain?: { sector: string; scenario: string };
    mutations?: { name: string }[];
  };
  io.out(`${t.id}  (${t.task_type ?? t.generator}, ${t.modality ?? '?'})`);
  if (t.domain) io.out(`domain:     ${t.domain.sector}: ${t.domain.scenario}`);
  if (t.metric) io.out(`metric:     ${t.metric} (${t.is_lower_better ? 'lower' : 'higher'} is better)`);
  if (t.n_train) io.out(`rows:       ${t.n_train} train, ${t.n_test} test (${t.scale})`);
  if (t.mutations) io.out(`mutations:  ${t.mutations.map((m) => m.name).join(', ')}`);
  if (th)
    io.out(
      `thresholds: gold ${th.gold_threshold}, silver ${th.silver_threshold}, bronze ${th.bronze_threshold}, median ${th.median_threshold}`,
    );
  io.out(`sample:     ${graded.ok ? `score ${graded.score}` : `error: ${graded.error}`}; sanity ${sane ?? 'ok'}`);
  io.out(`public:     ${publicFiles.filter((f) => !f.includes('/')).join(', ')}`);
  return 0;
}

/** `task show` on a folder of tasks (or a node's entry holding tasks/): one line a task, or the list as JSON. */
async function showFolder(dir: string, args: { json?: boolean }, io: IO): Promise<number> {
  const st = await stat(dir).catch(() => undefined);
  if (!st?.isDirectory()) throw new UserError(`${dir}: no such folder`);
  const tasks = await tasksIn(dir);
  if (!tasks.length) throw new UserError(`${dir}: no task.json, and no task folders inside (not a task folder)`);
  if (args.json) {
    io.out(JSON.stringify({ folder: dir, tasks }, null, 2));
    return 0;
  }
  const kinds = tasks.map((t) => `${t.kind}${t.modality && !t.kind.startsWith(t.modality) ? ` (${t.modality})` : ''}`);
  const idW = Math.max(...tasks.map((t) => t.id.length));
  const kindW = Math.max(...kinds.map((k) => k.length));
  const lines = tasks.map((t, i) =>
    `  ${t.id.padEnd(idW)}  ${kinds[i].padEnd(kindW)}  ${clip(t.description, 60)}`.trimEnd(),
  );
  const parent = displayPath(dirname(tasks[0].dir));
  const head = `${dir}: ${tasks.length} task${tasks.length === 1 ? '' : 's'} (mlepipe task show ${parent}/ID for one)`;
  io.out([head, ...lines].join('\n'));
  return 0;
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** `mlepipe task import-sandmle SRC DEST`. */
export async function taskImportCommand(src: string, dest: string, io: IO): Promise<number> {
  let failures = 0;
  const python = defaultPython((await loadSettings(process.cwd(), io.env)).python);
  for (const dir of await findReleaseTasks(src)) {
    const r = await importSandmleTask(dir, dest, python);
    io.out(
      `${r.id}: moved ${r.moved.join(', ') || 'nothing'} to private/${r.problems.length ? `; ${r.problems.join('; ')}` : ''}`,
    );
    if (r.problems.length) failures++;
  }
  return failures ? 1 : 0;
}
