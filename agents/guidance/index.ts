// Task-specific guidance for collecting demonstrations (MLToolBench App. D.1,
// Table 9): what the task and its starter are about, which diagnostic tools to
// call and what each outcome should change. It is written on the evaluator's
// side (from files the agent never sees) and shown only to a teacher: the
// student's copy of a guided run never contains it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { validateWithSchema } from '../../core/jsonschema.js';
import { UserError } from '../../core/errors.js';
import { isObject, readJsonSync } from '../../core/json-files.js';
import schema from '../../schemas/guidance.schema.json';
import { checkArgs, TOOLS_BY_NAME } from '../../tools/index.js';

export interface Guidance {
  context: string;
  inspect: Array<{ tool: string; args: Record<string, unknown>; why: string }>;
  act: Array<{ if: string; then: string }>;
  validate?: string;
}

/** A task's guidance as the guide stage stores it: who wrote it, and for which task. */
export interface GuidanceRecord extends Guidance {
  task_id: string;
  /** `procedural`, or the models: entry that wrote it. */
  source: string;
}

/** Why a (parsed) answer is not usable guidance: schema errors, unknown tools, bad tool arguments. */
export function guidanceProblems(value: unknown): string[] {
  const errs = validateWithSchema(schema, value, new Map(), []).map((d) => `${d.path || '(root)'}: ${d.message}`);
  if (errs.length) return errs;
  const g = value as Guidance;
  const out: string[] = [];
  g.inspect.forEach((c, i) => {
    const spec = TOOLS_BY_NAME.get(c.tool);
    if (!spec) return out.push(`inspect[${i}].tool: unknown tool "${c.tool}"`);
    try {
      checkArgs(spec, c.args);
    } catch (err) {
      out.push(
        `inspect[${i}].args: ${err instanceof UserError ? err.diagnostics.map((d) => d.message).join('; ') : (err as Error).message}`,
      );
    }
  });
  return out;
}

/** The text a teacher's prompt gets: Table 9's three parts, then the check before accepting an edit. */
export function renderGuidance(g: Guidance): string {
  return [
    'Guidance for this task (from the task author; obtain every observation through your own actions):',
    `Context. ${g.context}`,
    'Inspect.',
    ...g.inspect.map((c) => `- ${c.tool} ${JSON.stringify(c.args)}: ${c.why}`),
    'Act on evidence.',
    ...g.act.map((a) => `- If ${a.if}: ${a.then}`),
    ...(g.validate ? [`Validate. ${g.validate}`] : []),
  ].join('\n');
}

/** What the guidance writer may read of a task: its spec, its fault record and fix, the generator's facts. */
export interface TaskFacts {
  id: string;
  domain: string;
  template: string;
  metric: string;
  lowerIsBetter: boolean;
  baseline: { mean: number; std: number; runs: number } | null;
  /** The configuration (healthy, or the fault's name). */
  config: string;
  /** The reference fix: fragments of the starter and what they become. */
  fix: Array<{ find: string; replace: string }>;
  description: string;
  starter: string;
  /** Top-level entries of public/. */
  files: string[];
}

const readObject = (p: string): Record<string, unknown> =>
  existsSync(p) ? readJsonSync<Record<string, unknown>>(p, isObject) : {};

export function readTaskFacts(dir: string, id: string): TaskFacts {
  const task = readObject(join(dir, 'task.json'));
  const fault = readObject(join(dir, 'private', 'fault.json'));
  const text = (p: string) => (existsSync(p) ? readFileSync(p, 'utf8') : '');
  const b = task.baseline as { mean?: number; std?: number; runs?: number } | undefined;
  return {
    id,
    domain: String(task.domain ?? task.modality ?? 'unknown'),
    template: String(task.template ?? id),
    metric: String(task.metric ?? 'the metric'),
    lowerIsBetter: task.is_lower_better === true,
    baseline: b && typeof b.mean === 'number' ? { mean: b.mean, std: b.std ?? 0, runs: b.runs ?? 1 } : null,
    config: String(fault.config ?? 'healthy'),
    fix: Array.isArray(fault.fix) ? (fault.fix as TaskFacts['fix']) : [],
    description: text(join(dir, 'public', 'description.md')),
    starter: text(join(dir, 'public', 'train.py')),
    files: existsSync(join(dir, 'public')) ? readdirSync(join(dir, 'public')).sort() : [],
  };
}
