// What the tests of the released SandMLE code's rules share (release-rules.test.ts, release-scores.test.ts): a
// task folder shaped as the release ships one (its evaluator reads test.csv and answer.csv by relative path),
// imported the way mlepipe imports it, scripted replies in the release's format, and one eval rollout of them.
import * as assert from 'uvu/assert';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Policy } from '../../agents/policies/types.js';
import { react } from '../../agents/scaffolds/react/index.js';
import type { Trajectory } from '../../agents/trajectory.js';
import { DEFAULT_INPUTS, REWARD_PRESETS, rewardInputs } from '../../core/rewards/presets.js';
import type { Sandbox } from '../../sandbox/index.js';
import { runRollouts } from '../../stages/grpo/rollouts.js';
import type { Rollout } from '../../stages/grpo/batch.js';
import { rollout } from '../../stages/shared/episode.js';
import { importSandmleTask } from '../../tasks/importer.js';

export const PY = '/usr/bin/python3';
const ROWS = 20;

/** Writes the release's folder for task `id` under `root`/release with this evaluator and imports it into `root`/tasks. */
export async function releaseTask(root: string, id: string, evaluatorPy: string): Promise<string> {
  const pub = join(root, 'release', id, 'prepared', 'public');
  await mkdir(pub, { recursive: true });
  const rows = Array.from({ length: ROWS }, (_, i) => i);
  await writeFile(join(pub, 'description.md'), `## Competition ID: ${id}\nPredict label.\n`);
  await writeFile(join(pub, 'train.csv'), 'id,x,label\n' + rows.map((i) => `${i},${i},${i % 2}`).join('\n') + '\n');
  await writeFile(join(pub, 'test.csv'), 'id,x\n' + rows.map((i) => `${i},${i}`).join('\n') + '\n');
  await writeFile(join(pub, 'sample_submission.csv'), 'id,label\n' + rows.map((i) => `${i},0`).join('\n') + '\n');
  await writeFile(join(pub, 'answer.csv'), 'id,label\n' + rows.map((i) => `${i},${i % 2}`).join('\n') + '\n');
  await writeFile(join(pub, 'evaluator.py'), evaluatorPy);
  const r = await importSandmleTask(join(root, 'release', id), join(root, 'tasks'), PY);
  assert.equal(r.problems, [], `${id} imports as it is`);
  return join(root, 'tasks', id);
}

/** A submission with the first `right` of 20 labels correct: accuracy right/20. */
export const write = (right: number) =>
  `import pandas as pd\ns = pd.read_csv("public/sample_submission.csv")\ns["label"] = [(i % 2) if i < ${right} else 1 - (i % 2) for i in range(len(s))]\ns.to_csv("submission.csv", index=False)\nprint("written")`;
export const code = (think: string, body: string) =>
  `<think>${think}</think>\n<tool_call>\npython\n<code>\n${body}\n</code>\n</tool_call>`;
export const score = (think: string, id = 'cactus') =>
  `<think>${think}</think>\n<tool_call>\n{"name": "Score", "arguments": {"competition_id": "${id}"}}\n</tool_call>`;
export const ANSWER = '<think>done</think>\n<answer>submission</answer>';

export const replay = (replies: string[]): Policy => ({
  name: 'replay',
  kind: 'scripted',
  act: async (req) => ({
    text: replies[Math.min(req.turn, replies.length - 1)],
    usage: { prompt_tokens: 1, completion_tokens: 1 },
  }),
});

export const LIMITS = {
  maxTurns: 15,
  stepTimeoutMs: 2_000,
  timeBudgetMs: 600_000,
  contextTokens: 32_768,
  observationChars: 2000,
};
export const RELEASE = { reward: REWARD_PRESETS['sandmle-release'], inputs: rewardInputs('sandmle-release', {}, {}) };
export const DEFAULT = { reward: REWARD_PRESETS['sandmle-code'], inputs: DEFAULT_INPUTS };

/** One eval rollout in the release's format on the task in `dir`, rewarded the release's way or mlepipe's. */
export function runOn(
  sandbox: Sandbox,
  task: { id: string; dir: string },
  replies: string[],
  how: typeof RELEASE,
): Promise<Trajectory> {
  return rollout({
    sandbox,
    scaffold: react,
    policy: replay(replies),
    task,
    sample: 0,
    groupId: 'g',
    limits: LIMITS,
    memoryMb: 2048,
    aide: { numDrafts: 1, debugProb: 0, maxDebugDepth: 0 },
    python: PY,
    seed: 0,
    promptFormat: 'sandmle-release',
    signal: new AbortController().signal,
    ...how,
  });
}

/** One grpo rollout of the replies (grpo's runRollouts, a group of one), rewarded the release's way. */
export async function grpoRollout(
  sandbox: Sandbox,
  task: { id: string; dir: string },
  replies: string[],
  groupPrefix: string,
): Promise<Rollout> {
  const [r] = await runRollouts(
    {
      sandbox,
      policy: replay(replies),
      tasks: [task],
      group: 1,
      groupPrefix,
      limits: LIMITS,
      memoryMb: 2048,
      promptFormat: 'sandmle-release',
      python: PY,
      seed: 0,
      concurrency: 1,
      signal: new AbortController().signal,
      ...RELEASE,
    },
    () => {},
  );
  return r;
}

export const round = (x: number | null) => Number((x ?? NaN).toFixed(6));
