// Synthetic trajectories and the report page around them, for the HTML report's browser
// test (an AIDE journal, SPICE scores, tool calls) and its open-time bench (10,000 episodes).
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { outcomeOf, type IndexEntry, type PageData, type Recorded } from '../pipelines/report/html/data.js';
import { pageHtml, trajectoryWriter } from '../pipelines/report/html/page.js';

const MEDALS = ['gold', 'silver', 'bronze', 'median'] as const;

/** Three turns of code and output; an AIDE episode's carry its search operators, every eleventh a tool call. */
function syntheticTurns(i: number, aide: boolean) {
  return Array.from({ length: 3 }, (_, k) => ({
    turn: k,
    action: k === 2 ? 'answer' : 'code',
    code: `import pandas as pd\ndf = pd.read_csv('public/train.csv')\nprint(df.shape, ${k})\n`,
    observation: `exit code 0\n(${100 + k}, 4) ${k}`,
    exit_code: 0,
    timed_out: false,
    duration_ms: 800 + 10 * k,
    format_ok: true,
    ...(aide ? { operator: k ? 'improve' : 'draft', parent: k ? 0 : null, metric: 0.5 + k / 10, buggy: false } : {}),
    ...(i % 11 === 0 && k === 0 ? { name: 'ReadFile', args: { path: 'public/description.md' } } : {}),
  }));
}

/** The reward variables of an episode that reached the medals in `reached` (gold first) with `score`. */
function rewardVariables(reached: number[], score: number) {
  return {
    format: 1,
    execute: 1,
    valid: 1,
    median: reached[3],
    bronze: reached[2],
    silver: reached[1],
    gold: reached[0],
    score,
    improvement: score - 0.3,
    success: 1,
    turns: 3,
    reply_chars: 90,
    timed_out: 0,
  };
}

/** An AIDE episode's search journal, and every fifth episode's SPICE shaping. */
function searchAndShaping(i: number, aide: boolean, turns: ReturnType<typeof syntheticTurns>) {
  return {
    ...(aide
      ? {
          journal: {
            nodes: turns.map((t) => ({
              id: t.turn,
              parent: t.parent,
              operator: t.operator,
              metric: t.metric,
              buggy: false,
              plan: 'fit a model',
            })),
            best: 2,
            lower_is_better: false,
          },
        }
      : {}),
    ...(i % 5 === 0
      ? {
          shaping: {
            kind: 'spice',
            beta: 0.1,
            turns: turns.map((t) => ({ turn: t.turn, category: 'code', d: 0.25 * (t.turn + 1) })),
            rewards: [0.025, 0.05, 0.075],
          },
        }
      : {}),
  };
}

/** Trajectory i of a synthetic experiment: react episodes, every seventh an AIDE search, every fifth shaped by SPICE. */
export function syntheticTrajectory(i: number, variants: string[]): Recorded & { node: string } {
  const task = `task-${i % 50}`;
  const policy = `policy-${Math.floor(i / 50) % 4}`;
  const node = variants[Math.floor(i / 200) % variants.length];
  const aide = i % 7 === 3;
  const turns = syntheticTurns(i, aide);
  const messages = [
    { role: 'system', content: 'You are a machine-learning engineer.' },
    { role: 'user', content: `# Competition ${task}` },
    ...turns.flatMap((t) => [
      { role: 'assistant', content: `<think>step ${t.turn}</think>\n\`\`\`python\n${t.code}\`\`\`` },
      { role: 'user', content: t.observation },
    ]),
  ];
  const reached = MEDALS.map((_, k) => Number(i % 5 <= 3 - k));
  const score = 0.4 + (i % 5) / 20;
  return {
    node,
    scaffold: aide ? 'aide' : 'react',
    task_id: task,
    policy,
    group_id: `${task}/${policy}`,
    sample: i % 3,
    messages,
    turns,
    ended: 'answer',
    evaluation: {
      score,
      gold_threshold: 0.6,
      silver_threshold: 0.55,
      bronze_threshold: 0.5,
      median_threshold: 0.45,
      is_lower_better: false,
    },
    grade_error: null,
    starter_score: 0.3,
    variables: rewardVariables(reached, score),
    reward: reached[2],
    started: '2026-01-01T00:00:00.000Z',
    duration_ms: 2400,
    ...searchAndShaping(i, aide, turns),
  };
}

/** Writes a report page over `n` synthetic trajectories into `dir`; returns the page's path. */
export async function syntheticReport(dir: string, n: number, variants = ['agents']): Promise<string> {
  await mkdir(dir, { recursive: true });
  const write = await trajectoryWriter(dir);
  const index: IndexEntry[] = [];
  for (let i = 0; i < n; i++) {
    const t = syntheticTrajectory(i, variants);
    await write(i, t);
    index.push({
      i,
      n: t.node,
      s: 'agents',
      task: t.task_id!,
      policy: t.policy!,
      rep: t.sample!,
      outcome: outcomeOf(t),
      reward: t.reward ?? null,
      score: t.variables!.score,
      turns: 3,
      scaffold: String(t.scaffold),
    });
  }
  const data: PageData = {
    experiment: { name: 'synthetic', file: join(dir, 'synthetic.yaml') },
    generated: '2026-01-01T00:00:00.000Z',
    tables: [
      {
        name: 'medals',
        columns: ['policy', 'any_medal'],
        rows: [['policy-0', '40']],
        reference: { source: 'a paper', notes: ['paper only: theirs'] },
      },
    ],
    figures: [],
    funnel: [],
    curves: [],
    nodes: Object.fromEntries(variants.map((v) => [v, { stage: 'agents', variant: v }])),
    index,
  };
  const page = join(dir, 'index.html');
  await writeFile(page, await pageHtml(data));
  return page;
}
