// mlepipe's side of scripts/check-aide.sh: one AIDE search with preset aideml on a scenario's scripted replies,
// reviews and random draws, in the process sandbox; prints each node's decision as JSON lines.
//   node --import test/ts/register.mjs scripts/check_aide_mlepipe.ts SCENARIO.json TASK_DIR PYTHON JOURNAL.json
// (JOURNAL.json: the search in aideml's journal format, for aideml's loader).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aide } from '../agents/scaffolds/aide/index.js';
import { aideOptions, type AidePresetName } from '../agents/scaffolds/aide/presets.js';
import type { JournalNode } from '../agents/scaffolds/aide/search.js';
import { readTaskView } from '../agents/scaffolds/public.js';
import type { Policy } from '../agents/policies/types.js';
import { createSandbox } from '../sandbox/index.js';

interface Scenario {
  steps: number;
  /** Default aideml; a written max_debug_depth wins over the preset's. */
  preset?: AidePresetName;
  max_debug_depth?: number;
  code: string[];
  reviews: unknown[];
  draws: number[];
}

const [scenarioFile, taskDir, python, journalFile] = process.argv.slice(2);
const s = JSON.parse(readFileSync(scenarioFile, 'utf8')) as Scenario;
const code = [...s.code];
const reviews = [...s.reviews];
const draws = [...s.draws];
const policy: Policy = {
  name: 'scenario',
  kind: 'scripted',
  async act(req) {
    const text = req.purpose === 'review' ? JSON.stringify(reviews.shift()) : (code.shift() ?? '');
    return { text, usage: { prompt_tokens: 0, completion_tokens: 0 } };
  },
};
// The scenario's scripts are the check's own: the process backend, chosen by name.
const sandbox = createSandbox({ backend: 'process', python, explicit: true });
const session = await sandbox.open({ task: taskDir });
try {
  const ep = await aide.run({
    task: await readTaskView(taskDir, 'scenario'),
    session,
    policy,
    sample: 0,
    limits: {
      maxTurns: s.steps,
      stepTimeoutMs: 60_000,
      timeBudgetMs: 3_600_000,
      contextTokens: 1e6,
      observationChars: 4000,
    },
    aide: aideOptions({ preset: s.preset ?? 'aideml', max_debug_depth: s.max_debug_depth }),
    // aira-greedy's format check: a written submission.csv passes (the scenario's scripts write a valid one).
    validate: async (p) =>
      existsSync(join(session.workspace, p)) ? ({ ok: true } as never) : { ok: false, problem: 'no file' },
    signal: new AbortController().signal,
    random: () => draws.shift() ?? 0.999,
  });
  const j = ep.journal as { nodes: JournalNode[]; best: number | null; aide: unknown };
  writeFileSync(journalFile, JSON.stringify(j.aide));
  for (const n of j.nodes)
    console.log(
      JSON.stringify({ step: n.id, operator: n.operator, parent: n.parent, buggy: n.buggy, metric: n.metric }),
    );
  console.log(
    JSON.stringify({ best: j.best, code_left: code.length, reviews_left: reviews.length, draws_left: draws.length }),
  );
} finally {
  await session.close();
  await sandbox.shutdown();
}
