// Which worker checkpoints a grpo node keeps in its item store. A rerun
// resumes only from the last finished step, so that step's checkpoint is kept
// whole (weights and optimiser state). Of the steps `checkpoint_every` marks
// (and the last step), the newest `keep_checkpoints` stay as weights alone: a
// release or an evaluation reads the weights, never the optimiser state, which
// for full fine-tuning is six times their size (fp32 masters and two moments
// against bf16 weights). Under `select: best-val` the best validated step so
// far stays too, as weights. Everything else goes.

export interface RetentionOptions {
  every: number;
  steps: number;
  /** Marked checkpoints kept besides the resume point; 0: all of them. */
  keep: number;
  /** The step `select: best-val` hands on so far: kept (as weights) whatever its age. */
  selected?: number;
}

/** After step `k` is recorded: the checkpoints (by step) to delete, and those to cut to their weights. */
export function retention(
  present: readonly number[],
  k: number,
  o: RetentionOptions,
): { remove: number[]; trim: number[] } {
  const marked = present.filter((j) => j <= k && (j % o.every === 0 || j === o.steps)).sort((a, b) => a - b);
  const kept = new Set(o.keep > 0 ? marked.slice(-o.keep) : marked);
  if (o.selected !== undefined && present.includes(o.selected)) kept.add(o.selected);
  return {
    remove: present.filter((j) => j !== k && !kept.has(j)).sort((a, b) => a - b),
    trim: [...kept].filter((j) => j !== k).sort((a, b) => a - b),
  };
}
