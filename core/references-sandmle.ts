// The SandMLE paper's published numbers (docs/experiments.md#references), rates in percent. A row names what it is
// by its key columns (model, training, scaffold, …); null where the paper gives no number for that cell.
import type { ReferenceTable } from './references.js';

type Cells = Record<string, number | null>;
const TIERS = ['valid_submission', 'above_median', 'bronze_medal', 'silver_medal', 'gold_medal', 'any_medal'];
/** A Table 1 row: the tiers the paper states, the others null. */
const tiers = (model: string, training: string | null, cells: Cells) => ({
  model,
  training,
  ...Object.fromEntries(TIERS.map((t) => [t, cells[t] ?? null])),
});

export const SANDMLE_REFERENCES = {
  'sandmle-table1': {
    source: 'SandMLE Table 1: MLE-bench-lite (22 competitions), ReAct, % of competitions, one run each',
    keys: ['model', 'training'],
    columns: ['model', 'training', ...TIERS],
    rows: [
      tiers('Qwen3-8B', 'Base', { valid_submission: 68.2, above_median: 18.2, any_medal: 13.6 }),
      tiers('Qwen3-8B', 'Seed-SFT', { valid_submission: 72.7, any_medal: 13.6 }),
      tiers('Qwen3-8B', 'SandMLE', { valid_submission: 63.6, above_median: 27.3, any_medal: 22.7 }),
      tiers('Qwen3-8B', 'SFT-SandMLE', { valid_submission: 90.9, any_medal: 22.7 }),
      tiers('Qwen3-14B', 'Base', { above_median: 18.2, any_medal: 18.2 }),
      tiers('Qwen3-14B', 'Seed-SFT', { any_medal: 18.2 }),
      tiers('Qwen3-14B', 'SandMLE', { valid_submission: 77.3, above_median: 27.3, any_medal: 22.7 }),
      tiers('Qwen3-14B', 'SFT-SandMLE', { valid_submission: 95.5, gold_medal: 22.7, any_medal: 27.3 }),
      tiers('Qwen3-30B-A3B', 'Base', { valid_submission: 68.2, above_median: 18.2, any_medal: 13.6 }),
      tiers('Qwen3-30B-A3B', 'Seed-SFT', { valid_submission: 77.3, any_medal: 22.7 }),
      tiers('Qwen3-30B-A3B', 'SandMLE', { valid_submission: 100.0, above_median: 36.4, any_medal: 27.3 }),
      tiers('Qwen3-30B-A3B', 'SFT-SandMLE', { valid_submission: 90.9, any_medal: 27.3 }),
      // The closed-source models as released: no training key.
      tiers('Claude-4.5-Sonnet', null, { valid_submission: 95.5, gold_medal: 27.3, any_medal: 31.8 }),
      tiers('DeepSeek-V3.1', null, { any_medal: 22.7 }),
      tiers('Gemini-2.5-Flash', null, { any_medal: 22.7 }),
    ],
  },
  'sandmle-table2': {
    source: 'SandMLE Table 2: MLE-bench-lite with AIDE and AIRA, Any Medal %',
    keys: ['model', 'scaffold', 'training'],
    columns: ['model', 'scaffold', 'training', 'any_medal'],
    rows: [
      { model: 'Qwen3-14B', scaffold: 'AIDE', training: 'Base', any_medal: 27.3 },
      { model: 'Qwen3-14B', scaffold: 'AIDE', training: 'Seed-SFT', any_medal: 18.2 },
      { model: 'Qwen3-14B', scaffold: 'AIDE', training: 'SandMLE', any_medal: 31.8 },
      { model: 'Qwen3-14B', scaffold: 'AIRA', training: 'Base', any_medal: 9.1 },
      { model: 'Qwen3-14B', scaffold: 'AIRA', training: 'Seed-SFT', any_medal: 13.6 },
      { model: 'Qwen3-14B', scaffold: 'AIRA', training: 'SandMLE', any_medal: 22.7 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIDE', training: 'Base', any_medal: 13.6 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIDE', training: 'Seed-SFT', any_medal: 13.6 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIRA', training: 'Base', any_medal: 18.2 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIRA', training: 'Seed-SFT', any_medal: 13.6 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIRA', training: 'SandMLE', any_medal: 27.3 },
    ],
  },
  'sandmle-table3': {
    source: 'SandMLE Table 3: MLE-Dojo, valid submission % and HumanRank (0–100)',
    keys: ['model', 'scaffold', 'training'],
    columns: ['model', 'scaffold', 'training', 'valid_submission', 'human_rank'],
    rows: [
      { model: 'Qwen3-14B', scaffold: 'MLE-Agent', training: 'Base', valid_submission: 27.4, human_rank: 9.62 },
      { model: 'Qwen3-14B', scaffold: 'MLE-Agent', training: 'Seed-SFT', valid_submission: 3.2, human_rank: 0.65 },
      { model: 'Qwen3-14B', scaffold: 'MLE-Agent', training: 'SandMLE', valid_submission: 40.3, human_rank: 12.55 },
      { model: 'Qwen3-14B', scaffold: 'AIDE', training: 'Base', valid_submission: 74.2, human_rank: null },
      { model: 'Qwen3-14B', scaffold: 'AIDE', training: 'Seed-SFT', valid_submission: 62.9, human_rank: null },
      { model: 'Qwen3-30B-A3B', scaffold: 'MLE-Agent', training: 'Base', valid_submission: 71.0, human_rank: 29.12 },
      { model: 'Qwen3-30B-A3B', scaffold: 'MLE-Agent', training: 'Seed-SFT', valid_submission: 17.7, human_rank: 7.34 },
      { model: 'Qwen3-30B-A3B', scaffold: 'MLE-Agent', training: 'SandMLE', valid_submission: 83.9, human_rank: 38.56 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIDE', training: 'Base', valid_submission: 59.7, human_rank: 25.99 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIDE', training: 'Seed-SFT', valid_submission: 66.1, human_rank: 28.14 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIDE', training: 'SandMLE', valid_submission: 77.4, human_rank: 28.72 },
    ],
  },
  'sandmle-table4': {
    source: 'SandMLE Table 4: dense milestone vs sparse reward, MLE-bench-lite, ReAct, %',
    keys: ['model', 'reward'],
    columns: ['model', 'reward', 'valid_submission', 'above_median', 'any_medal'],
    rows: [
      { model: 'Qwen3-8B', reward: 'sparse', valid_submission: null, above_median: null, any_medal: 13.6 },
      { model: 'Qwen3-14B', reward: 'sparse', valid_submission: null, above_median: null, any_medal: 18.2 },
      { model: 'Qwen3-30B-A3B', reward: 'dense', valid_submission: 100.0, above_median: 36.4, any_medal: 27.3 },
      { model: 'Qwen3-30B-A3B', reward: 'sparse', valid_submission: 86.4, above_median: 18.2, any_medal: 13.6 },
    ],
  },
  'sandmle-fig4': {
    source: 'SandMLE Fig. 4: pairwise win rate % on 64 synthetic tasks',
    keys: ['model'],
    columns: ['model', 'overall'],
    rows: [
      { model: 'Claude-4.5-Sonnet', overall: 92.9 },
      { model: 'DeepSeek-V3', overall: 39.9 },
      { model: 'Gemini-2.5-Flash', overall: 35.6 },
      { model: 'GPT-4o-mini', overall: 25.5 },
    ],
  },
  'sandmle-fig6': {
    source: 'SandMLE Fig. 6: mean seconds per code execution (Gemini-2.5-Flash code)',
    keys: ['tasks'],
    columns: ['tasks', 'mean_s'],
    rows: [
      { tasks: 'MLE-bench (full data)', mean_s: 196.17 },
      { tasks: 'SandMLE (micro-scale)', mean_s: 14.31 },
    ],
  },
  'sandmle-fig7': {
    source: 'SandMLE Fig. 7: test-time turns, Qwen3-30B-SFT-SandMLE, ReAct (% of tasks); at 40 turns both lie in 32–36',
    keys: ['max_turns'],
    columns: ['max_turns', 'any_medal', 'above_median'],
    rows: [
      { max_turns: '0', any_medal: 23, above_median: null },
      { max_turns: '5', any_medal: 27, above_median: null },
      { max_turns: '20', any_medal: 45, above_median: null },
      { max_turns: '30', any_medal: 55, above_median: 50 },
      { max_turns: '40', any_medal: null, above_median: null },
    ],
  },
  'sandmle-fig8': {
    source:
      'SandMLE Fig. 8 (App. B.1): GRPO over 80 steps, read off the curves: peak training reward, range of the valid rate',
    keys: ['model'],
    columns: ['model', 'reward_max', 'valid_min', 'valid_max'],
    rows: [
      { model: 'Qwen3-8B', reward_max: 0.6, valid_min: 0.1, valid_max: 0.8 },
      { model: 'Qwen3-14B', reward_max: 0.62, valid_min: null, valid_max: 1.0 },
      { model: 'Qwen3-30B-A3B', reward_max: 0.67, valid_min: null, valid_max: null },
    ],
  },
  'sandmle-corpus': {
    source: 'SandMLE §C.1: task corpus funnel (candidates → generated → evaluator runs → sane → train / val)',
    keys: ['corpus'],
    columns: ['corpus', 'candidates', 'input', 'evaluator_ok', 'sane', 'train', 'val'],
    rows: [{ corpus: 'SandMLE', candidates: 1200, input: 1119, evaluator_ok: 1106, sane: 912, train: 848, val: 64 }],
  },
} satisfies Record<string, ReferenceTable>;
