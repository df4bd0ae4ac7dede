// The papers' published numbers (docs/experiments.md), printed beside our tables when
// an experiment names them with `reference:`. Rates are in percent.
/** Published numbers to print beside a table. */
export interface ReferenceTable {
  source: string;
  columns?: string[];
  rows: Array<Record<string, string | number | null>>;
}

export const REFERENCES: Readonly<Record<string, ReferenceTable>> = {
  'sandmle-table1': {
    source: 'SandMLE Table 1: MLE-bench-lite, ReAct, Any Medal %',
    columns: ['model', 'base', 'seed_sft', 'sandmle'],
    rows: [
      { model: 'Qwen3-8B', base: 13.6, seed_sft: 13.6, sandmle: 22.7 },
      { model: 'Qwen3-14B', base: 18.2, seed_sft: 18.2, sandmle: 22.7 },
      { model: 'Qwen3-30B-A3B', base: 13.6, seed_sft: 22.7, sandmle: 27.3 },
    ],
  },
  'sandmle-table3': {
    source: 'SandMLE Table 3: MLE-Dojo, valid submission % and HumanRank (0–100); - where the paper names no number',
    columns: ['model', 'scaffold', 'base_valid', 'base_human_rank', 'seed_sft_valid', 'seed_sft_human_rank', 'sandmle_valid', 'sandmle_human_rank'],
    rows: [
      { model: 'Qwen3-14B', scaffold: 'MLE-Agent', base_valid: 27.4, base_human_rank: 9.62, seed_sft_valid: 3.2, seed_sft_human_rank: 0.65, sandmle_valid: 40.3, sandmle_human_rank: 12.55 },
      { model: 'Qwen3-14B', scaffold: 'AIDE', base_valid: 74.2, base_human_rank: null, seed_sft_valid: 62.9, seed_sft_human_rank: null, sandmle_valid: null, sandmle_human_rank: null },
      { model: 'Qwen3-30B-A3B', scaffold: 'MLE-Agent', base_valid: 71.0, base_human_rank: 29.12, seed_sft_valid: 17.7, seed_sft_human_rank: 7.34, sandmle_valid: 83.9, sandmle_human_rank: 38.56 },
      { model: 'Qwen3-30B-A3B', scaffold: 'AIDE', base_valid: 59.7, base_human_rank: 25.99, seed_sft_valid: 66.1, seed_sft_human_rank: 28.14, sandmle_valid: 77.4, sandmle_human_rank: 28.72 },
    ],
  },
  'sandmle-table4': {
    source: 'SandMLE Table 4: sparse reward baseline, Qwen3-30B-A3B',
    columns: ['reward', 'valid_submission', 'any_medal'],
    rows: [{ reward: 'sparse', valid_submission: 86.4, any_medal: 13.6 }],
  },
  'sandmle-fig4': {
    source: 'SandMLE Fig. 4: pairwise win rate % on 64 synthetic tasks',
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
    columns: ['tasks', 'mean_s'],
    rows: [
      { tasks: 'MLE-bench (full data)', mean_s: 196.17 },
      { tasks: 'SandMLE (micro-scale)', mean_s: 14.31 },
    ],
  },
  'sandmle-fig7': {
    source: 'SandMLE Fig. 7: test-time turns, Qwen3-30B-SFT-SandMLE, ReAct (% of tasks)',
    columns: ['max_turns', 'any_medal', 'above_median'],
    rows: [
      { max_turns: 0, any_medal: 23, above_median: null },
      { max_turns: 5, any_medal: 27, above_median: null },
      { max_turns: 20, any_medal: 45, above_median: null },
      { max_turns: 30, any_medal: 55, above_median: 50 },
      { max_turns: 40, any_medal: '32–36', above_median: '32–36' },
    ],
  },
  'sandmle-corpus': {
    source: 'SandMLE §C.1: task corpus funnel',
    columns: ['candidates', 'generated', 'evaluator_ok', 'sane', 'train', 'val'],
    rows: [{ candidates: 1200, generated: 1119, evaluator_ok: 1106, sane: 912, train: 848, val: 64 }],
  },
  'mltoolbench-table1': {
    source: 'MLToolBench Table 1: success % (250 ID / 100 OOD runs); Original = MLAgentBench tools only, + MLToolBench = with the diagnostics',
    columns: ['model', 'training', 'id_original', 'id_mltoolbench', 'ood_original', 'ood_mltoolbench'],
    rows: [
      { model: 'Gemini 3.6 Flash', training: '-', id_original: 65.2, id_mltoolbench: 61.2, ood_original: 52.0, ood_mltoolbench: 46.0 },
      { model: 'Claude Sonnet 5', training: '-', id_original: 64.8, id_mltoolbench: 62.4, ood_original: 45.0, ood_mltoolbench: 43.0 },
      { model: 'Qwen2.5-Coder-14B', training: '-', id_original: 45.2, id_mltoolbench: 40.4, ood_original: 34.0, ood_mltoolbench: 32.0 },
      { model: 'DeepSeek-Coder-33B-Instruct', training: '-', id_original: 57.2, id_mltoolbench: 49.2, ood_original: 36.0, ood_mltoolbench: 34.0 },
      { model: 'Qwen3-8B', training: '-', id_original: 24.4, id_mltoolbench: 24.8, ood_original: 23.0, ood_mltoolbench: 20.0 },
      { model: 'Qwen3.5-35B-A3B', training: '-', id_original: 34.4, id_mltoolbench: 35.6, ood_original: 29.0, ood_mltoolbench: 31.0 },
      { model: 'Qwen3-8B', training: 'full SFT', id_original: 36.8, id_mltoolbench: 38.4, ood_original: 28.0, ood_mltoolbench: 32.0 },
      { model: 'Qwen3-8B', training: 'SFT + RL (SPICE)', id_original: 49.2, id_mltoolbench: 52.4, ood_original: 28.0, ood_mltoolbench: 36.0 },
      { model: 'Qwen3.5-35B-A3B', training: 'full SFT', id_original: 39.6, id_mltoolbench: 44.4, ood_original: 34.0, ood_mltoolbench: 41.0 },
      { model: 'Qwen3.5-35B-A3B', training: 'SFT + RL (SPICE)', id_original: 51.2, id_mltoolbench: 69.2, ood_original: 41.0, ood_mltoolbench: 48.0 },
    ],
  },
  'mltoolbench-table5': {
    source: 'MLToolBench Table 5: coverage (rollouts out of five invoking a category), mean calls and distinct tools per rollout',
    columns: ['model', 'training', 'data_management', 'verification', 'calls', 'distinct_tools'],
    rows: [
      { model: '8B', training: 'full SFT', data_management: 2.5, verification: 3.4, calls: 5, distinct_tools: 2 },
      { model: '8B', training: 'RL + SPICE', data_management: 2.5, verification: 3.3, calls: 11, distinct_tools: 6 },
      { model: '35B', training: 'full SFT', data_management: 2.6, verification: 3.9, calls: 7, distinct_tools: 4 },
      { model: '35B', training: 'outcome-only RL', data_management: 0.8, verification: 1.3, calls: 9, distinct_tools: 2 },
      { model: '35B', training: 'RL + TIPS', data_management: 1.4, verification: 1.6, calls: 10, distinct_tools: 3 },
      { model: '35B', training: 'RL + SPICE', data_management: 2.7, verification: 4.7, calls: 11, distinct_tools: 8 },
    ],
  },
  'mltoolbench-table6': {
    source: 'MLToolBench Table 6: diagnostic-observation intervention, ID success % (250 rollouts, 35B policies, all tools)',
    columns: ['training', 'observation', 'id'],
    rows: [
      { training: 'outcome-only RL', observation: 'true', id: 48.0 },
      { training: 'outcome-only RL', observation: 'masked', id: 46.4 },
      { training: 'outcome-only RL', observation: 'paraphrased', id: 47.6 },
      { training: 'RL + SPICE', observation: 'true', id: 69.2 },
      { training: 'RL + SPICE', observation: 'masked', id: 54.4 },
      { training: 'RL + SPICE', observation: 'paraphrased', id: 68.4 },
    ],
  },
  'mltoolbench-fig7': {
    source: 'MLToolBench Fig. 7 / App. B.1: RL stage and reward, success % with MLToolBench (ID / OOD)',
    columns: ['model', 'condition', 'id', 'ood'],
    rows: [
      { model: 'Qwen3-8B', condition: 'full SFT', id: 38.4, ood: 32.0 },
      { model: 'Qwen3-8B', condition: 'outcome-only RL', id: 39.2, ood: 33.0 },
      { model: 'Qwen3-8B', condition: 'RL + TIPS', id: 44.4, ood: 35.0 },
      { model: 'Qwen3-8B', condition: 'RL + SPICE', id: 52.4, ood: 36.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'full SFT', id: 44.4, ood: 41.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'outcome-only RL', id: 48.0, ood: 44.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'RL + TIPS', id: 55.2, ood: 45.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'RL + SPICE', id: 69.2, ood: 48.0 },
    ],
  },
  'mltoolbench-fig5': {
    source: 'MLToolBench Fig. 5: Gemini with and without task-specific guidance and diagnostic tools, success %',
    columns: ['guidance', 'diagnostics', 'id', 'ood'],
    rows: [
      { guidance: 'no', diagnostics: 'no', id: 65.2, ood: 52.0 },
      { guidance: 'no', diagnostics: 'yes', id: 61.2, ood: 46.0 },
      { guidance: 'yes', diagnostics: 'no', id: 68.4, ood: 56.0 },
      { guidance: 'yes', diagnostics: 'yes', id: 74.4, ood: 65.0 },
    ],
  },
  'mltoolbench-fig6': {
    source: 'MLToolBench Fig. 6 / App. B.1 with Table 1: full SFT with vs without MLToolBench demonstrations, success % by evaluation interface',
    columns: ['model', 'demonstrations', 'original_id', 'mltoolbench_id', 'original_ood', 'mltoolbench_ood'],
    rows: [
      { model: 'Qwen3-8B', demonstrations: 'with MLToolBench', original_id: 36.8, mltoolbench_id: 38.4, original_ood: 28.0, mltoolbench_ood: 32.0 },
      { model: 'Qwen3-8B', demonstrations: 'without MLToolBench', original_id: null, mltoolbench_id: 25.2, original_ood: null, mltoolbench_ood: 20.0 },
      { model: 'Qwen3.5-35B-A3B', demonstrations: 'with MLToolBench', original_id: 39.6, mltoolbench_id: 44.4, original_ood: 34.0, mltoolbench_ood: 41.0 },
      { model: 'Qwen3.5-35B-A3B', demonstrations: 'without MLToolBench', original_id: null, mltoolbench_id: 39.2, original_ood: null, mltoolbench_ood: 32.0 },
    ],
  },
  'mltoolbench-table4': {
    source: 'MLToolBench Table 4 and App. B.1: controls, success % (ID / OOD)',
    columns: ['model', 'condition', 'id', 'ood'],
    rows: [
      { model: 'Qwen3.5-35B-A3B', condition: 'outcome-only RL', id: 48.0, ood: 44.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'SPICE, full summaries', id: 69.2, ood: 48.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'SPICE, reduced summaries', id: 67.2, ood: 41.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'SPICE, shuffled scores', id: 59.2, ood: 45.0 },
      { model: 'Qwen3-8B', condition: 'SPICE, tool dropout 20%', id: 50.0, ood: 31.0 },
      { model: 'Qwen3.5-35B-A3B', condition: 'SPICE, tool dropout 20%', id: 58.0, ood: 36.0 },
    ],
  },
  'mltoolbench-fig4': {
    source: 'MLToolBench Fig. 4: mean |score| of diagnostic calls over editing/execution actions, three scorers',
    columns: ['shaping', 'diagnostic_over_execution'],
    rows: [
      { shaping: 'tips', diagnostic_over_execution: '0.37–0.54' },
      { shaping: 'spice', diagnostic_over_execution: '0.80–0.93' },
    ],
  },
  'mltoolbench-table3': {
    source: 'MLToolBench Table 3: RL settings',
    columns: ['setting', 'value'],
    rows: [
      { setting: 'updates', value: 100 },
      { setting: 'rollouts', value: '8 tasks × 8' },
      { setting: 'lr', value: '1e-6 cosine' },
      { setting: 'clip / KL', value: '0.2 / 0' },
      { setting: 'kappa', value: '[0.05, 0.3]' },
      { setting: 'references', value: 'up to 8 a task' },
      { setting: 'temperature / top-p / tokens', value: '1.0 / 1.0 / 1024' },
    ],
  },
};
