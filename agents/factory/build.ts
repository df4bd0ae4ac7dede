// One task from the four roles on an LLM. The Data Strategist's spec goes to
// the ML Developer, whose script runs in the sandbox (a traceback or missing
// file goes back for repair, up to 5 attempts); the MLOps Engineer's
// evaluator must grade the sample submission with the contract's JSON (up to
// 3 attempts); the Technical Writer's description must pass the leakage
// check. The task folder follows docs/tasks.md, like a procedural one.
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exists, relativeFiles } from '../../core/fs.js';
import type { Session } from '../../sandbox/types.js';
import { LOWER_IS_BETTER, type SeedDna, type TaskMetric } from '../../seeds/index.js';
import { runEvaluator } from '../../tasks/evaluate.js';
import { csvHeader } from '../../tasks/csv-header.js';
import { leakageProblems } from '../../tasks/roles.js';
import { freezeLeaderboard, PROVISIONAL_THRESHOLDS } from '../../tasks/synthetic-leaderboard.js';
import { writeTaskJson } from '../../tasks/taskjson.js';
import type { ChatMessage, LlmClient } from '../llm/client.js';
import { extractBlock, renderPrompt } from './answers.js';
import { askStrategist, type StrategistAnswer } from './strategist.js';

export interface LlmBuildOptions {
  client: LlmClient;
  session: Session;
  python: string;
  seedDescription: string;
  samples: [number, number];
  /** Which sample of the prompts this task is (several tasks per seed). */
  sample: number;
  attempts: { strategist: number; developer: number; mlops: number; writer: number };
  signal?: AbortSignal;
  log?: (m: string) => void;
}

export type LlmBuildResult =
  | { ok: true; taskId: string; sampleScore: number; attempts: Record<string, number> }
  | {
      ok: false;
      stage: 'strategist' | 'generate' | 'evaluator' | 'leakage';
      error: string;
      attempts: Record<string, number>;
    };

const tail = (s: string, n = 15) => s.trim().split('\n').slice(-n).join('\n');

/** The reference teams' submissions a script wrote (OUT/teams/*.csv), which then set the thresholds. */
async function teamFiles(out: string): Promise<string[]> {
  return (await readdir(join(out, 'teams')).catch(() => [] as string[])).filter((f) => f.endsWith('.csv'));
}

/**
 * What is wrong with the files a generator script produced, if anything. The
 * thresholds come either from the script's own baselines (threshold.json, as
 * the released factory's developer writes them) or from reference teams'
 * submissions in teams/, ranked into a leaderboard once the evaluator exists.
 */
export async function generatedProblems(out: string, target: string): Promise<string[]> {
  const problems: string[] = [];
  const teams = (await teamFiles(out)).length > 0;
  for (const f of [
    'public/train.csv',
    'public/test.csv',
    'public/sample_submission.csv',
    'private/answer.csv',
    ...(teams ? [] : ['private/threshold.json']),
  ]) {
    if ((await csvHeader(join(out, f))) === null) problems.push(`${f} was not written`);
  }
  if (problems.length) return problems;
  if (teams && !(await exists(join(out, 'private', 'threshold.json')))) return problems;
  const sample = await csvHeader(join(out, 'public', 'sample_submission.csv'));
  const answer = await csvHeader(join(out, 'private', 'answer.csv'));
  if (sample?.join() !== answer?.join())
    problems.push(
      `answer.csv columns (${answer?.join(', ')}) differ from sample_submission.csv (${sample?.join(', ')})`,
    );
  if ((await csvHeader(join(out, 'public', 'test.csv')))?.includes(target))
    problems.push(`public/test.csv has the target column ${target}`);
  try {
    const th = JSON.parse(await readFile(join(out, 'private', 'threshold.json'), 'utf8')) as Record<string, unknown>;
    const keys = Object.keys(th).sort().join();
    if (keys !== 'bronze_threshold,gold_threshold,median_threshold,silver_threshold')
      problems.push(`threshold.json keys are ${keys}, not exactly the four thresholds`);
    else if (Object.values(th).some((v) => typeof v !== 'number' || !Number.isFinite(v)))
      problems.push('threshold.json values must be finite numbers');
  } catch {
    problems.push('threshold.json is not valid JSON');
  }
  return problems;
}

/** Asks, checks, and sends the problems back until the answer passes or attempts run out. */
async function converse(
  client: LlmClient,
  first: string,
  attempts: number,
  check: (answer: string) => Promise<string[]>,
  o: { sample: number; signal?: AbortSignal },
): Promise<{ ok: boolean; answer: string; attempts: number; last: string }> {
  const messages: ChatMessage[] = [{ role: 'user', content: first }];
  let last = '';
  for (let i = 1; i <= attempts; i++) {
    const answer = (await client.chat({ messages, sample: o.sample }, o.signal)).content;
    const problems = await check(answer);
    if (!problems.length) return { ok: true, answer, attempts: i, last };
    last = problems.join('\n');
    messages.push(
      { role: 'assistant', content: answer },
      { role: 'user', content: `That did not work:\n${last}\nFix it and answer again in the same form.` },
    );
  }
  return { ok: false, answer: '', attempts, last };
}

type Spec = StrategistAnswer['spec'];

export async function buildLlmTask(seed: SeedDna, dest: string, o: LlmBuildOptions): Promise<LlmBuildResult> {
  const attempts: Record<string, number> = {};
  const strat = await askStrategist(o.client, o.seedDescription, {
    samples: o.samples,
    attempts: o.attempts.strategist,
    sample: o.sample,
    signal: o.signal,
  });
  attempts.strategist = strat.attempts;
  if (!strat.ok || !strat.value)
    return { ok: false, stage: 'strategist', error: strat.errors.at(-1) ?? 'no answer', attempts };
  const plan: StrategistAnswer = strat.value;
  const spec = plan.spec;
  const specText = JSON.stringify(
    { ...spec, mutations: plan.mutations, scenario: plan.scenarios[plan.chosen] },
    null,
    2,
  );
  const slug =
    spec.task_name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'task';
  const taskId = `${slug}-${seed.id.slice(0, 20)}-${o.sample}`;

  const dev = await develop(o, spec, specText);
  attempts.developer = dev.attempts;
  if (!dev.ok) return { ok: false, stage: 'generate', error: dev.last, attempts };
  const teams = await keepGenerated(dest, o.session.workspace, dev.script, { seed: seed.id, ...plan });

  const sampleText = await readFile(join(dest, 'public', 'sample_submission.csv'), 'utf8');
  const ops = await engineerEvaluator(o, dest, spec, specText, sampleText);
  attempts.mlops = ops.attempts;
  if (!ops.ok) return { ok: false, stage: 'evaluator', error: ops.last, attempts };
  const metric = spec.metric as TaskMetric;
  if (teams) {
    const board = await freezeLeaderboard(
      dest,
      join(o.session.workspace, 'out', 'teams'),
      o.python,
      LOWER_IS_BETTER[metric],
    );
    if (!board.ok) return { ok: false, stage: 'evaluator', error: board.error, attempts };
  }

  const writer = await describe(o, dest, spec, sampleText);
  attempts.writer = writer.attempts;
  if (!writer.ok) return { ok: false, stage: 'leakage', error: writer.last, attempts };

  const rows = async (f: string) =>
    Math.max(0, (await readFile(join(dest, 'public', f), 'utf8')).trim().split('\n').length - 1);
  await writeTaskJson(dest, {
    id: taskId,
    modality: plan.dna.modality,
    task_type: `${plan.dna.modality}-${spec.target.kind}`,
    metric,
    is_lower_better: LOWER_IS_BETTER[metric],
    n_train: await rows('train.csv'),
    n_test: await rows('test.csv'),
    seed: o.sample,
    source: {
      seed_id: seed.id,
      split: seed.split,
      modality: seed.modality,
      task_type: seed.task_type,
      metric: seed.metric,
    },
    mutations: plan.mutations,
    domain: { sector: plan.scenarios[plan.chosen].domain, scenario: plan.scenarios[plan.chosen].scenario },
    generator: 'llm',
    sample_score: ops.sampleScore,
  });
  return { ok: true, taskId, sampleScore: ops.sampleScore, attempts };
}

/** ML Developer: the script runs in the sandbox and must write the task's files; the script that did. */
async function develop(o: LlmBuildOptions, spec: Spec, specText: string) {
  const ws = o.session.workspace;
  let script = '';
  const dev = await converse(
    o.client,
    renderPrompt('factory/ml-developer', { spec: specText }),
    o.attempts.developer,
    async (answer) => {
      const code = extractBlock(answer, 'python');
      if (!code) return ['answer with exactly one fenced python block'];
      script = code;
      await rm(join(ws, 'out'), { recursive: true, force: true });
      await writeFile(join(ws, 'generate_task_env.py'), code);
      const r = await o.session.run(
        { file: 'generate_task_env.py', args: ['out'] },
        { timeoutMs: 300_000, memoryMb: 4096 },
      );
      if (r.exitCode !== 0)
        return [`the script failed (exit ${r.exitCode}${r.timedOut ? ', timed out' : ''}):\n${tail(r.stderr)}`];
      return generatedProblems(join(ws, 'out'), spec.target.name);
    },
    o,
  );
  return { ...dev, script };
}

/** The generated files, the script and the plan in the task folder; whether reference teams set the thresholds. */
async function keepGenerated(dest: string, ws: string, script: string, plan: object): Promise<boolean> {
  await rm(dest, { recursive: true, force: true });
  await mkdir(dest, { recursive: true });
  await cp(join(ws, 'out', 'public'), join(dest, 'public'), { recursive: true });
  await cp(join(ws, 'out', 'private'), join(dest, 'private'), { recursive: true });
  await writeFile(join(dest, 'private', 'generate_task_env.py'), script);
  await writeFile(join(dest, 'private', 'spec.json'), JSON.stringify(plan, null, 2) + '\n');
  const teams = (await teamFiles(join(ws, 'out'))).length > 0;
  // Evaluators print the thresholds with the score: until the leaderboard sets them, placeholders.
  if (teams) await writeFile(join(dest, 'private', 'threshold.json'), PROVISIONAL_THRESHOLDS);
  return teams;
}

/** MLOps Engineer: the evaluator must grade the sample submission; the score it gave. */
async function engineerEvaluator(o: LlmBuildOptions, dest: string, spec: Spec, specText: string, sampleText: string) {
  const metric = spec.metric as TaskMetric;
  let sampleScore = 0;
  const ops = await converse(
    o.client,
    renderPrompt('factory/mlops-engineer', {
      spec: specText,
      metric,
      direction: LOWER_IS_BETTER[metric] ? 'lower' : 'higher',
      columns: sampleText.split('\n')[0].trim(),
    }),
    o.attempts.mlops,
    async (answer) => {
      const code = extractBlock(answer, 'python');
      if (!code) return ['answer with exactly one fenced python block'];
      await writeFile(join(dest, 'private', 'evaluator.py'), code);
      const r = await runEvaluator(dest, o.python);
      if (!r.ok) return [`on sample_submission.csv the evaluator gave: ${r.error}`];
      sampleScore = r.score;
      return [];
    },
    o,
  );
  return { ...ops, sampleScore };
}

/** Technical Writer: the description must not leak the target, the test columns or the hidden rule. */
async function describe(o: LlmBuildOptions, dest: string, spec: Spec, sampleText: string) {
  const publicFiles = await relativeFiles(join(dest, 'public'));
  const testColumns = (await csvHeader(join(dest, 'public', 'test.csv'))) ?? [];
  return converse(
    o.client,
    renderPrompt('factory/technical-writer', {
      spec: JSON.stringify({ ...spec, hidden_rule_logic: undefined }, null, 2),
      files: publicFiles.join(', '),
      sample: sampleText.split('\n').slice(0, 4).join('\n'),
    }),
    o.attempts.writer,
    async (answer) => {
      const md = (extractBlock(answer, 'markdown') ?? answer).trim();
      if (md.length < 40) return ['the description is too short'];
      const leaks = leakageProblems(spec.target.name, md, testColumns, publicFiles, spec.hidden_rule_logic);
      if (!leaks.length) await writeFile(join(dest, 'public', 'description.md'), md + '\n');
      return leaks;
    },
    o,
  );
}
