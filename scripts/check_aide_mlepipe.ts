// mlepipe's side of scripts/check-aide.sh: one AIDE search with preset aideml on a scenario's scripted replies,
// reviews and random draws, in the process sandbox; prints each node's decision as JSON lines.
//   node --import test/ts/register.mjs scripts/check_aide_mlepipe.ts SCENARIO.json TASK_DIR PYTHON JOURNAL.json
// (JOURNAL.json: the search in aideml's journal format, for aideml's loader).
import { readFileSync, writeFileSync } from 'node:fs';
import { aide } from '../agents/scaffolds/aide/index.js';
import { aideOptions } from '../agents/scaffolds/aide/presets.js';
import type { JournalNode } from '../agents/scaffolds/aide/search.js';
import { readTaskView } from '../agents/scaffolds/public.js';
import type { Policy } from '../agents/policies/types.js';
import { createSandbox } from '../sandbox/index.js';

interface Scenario {
  steps: number;
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
    aide: aideOptions({ preset: 'aideml' }),
    validate: async () => ({ ok: false, problem: 'not checked' }),
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
