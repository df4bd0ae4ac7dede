// Code that calls the solution kit, as an agent would write it: the first
// solving step carries the whole kit and saves it as a module; later steps
// import it.
import { sklearnStackWith } from '../../sandbox/warm/modules.js';
import { kitSource } from '../kit/source.js';
import { releaseReply } from '../scaffolds/react/release.js';
import type { PolicyRequest } from './types.js';

/**
 * What the code of the kit's agents (the scripted agents, the template policy) imports: the kit's stack
 * (scikit-learn, LightGBM for its lgbm strategy, Pillow for images) and never torch or XGBoost. A stage whose
 * every policy writes such code preloads only these in its warm jails.
 */
export const KIT_MODULES = sklearnStackWith(
  'sklearn.pipeline',
  'sklearn.feature_extraction.text',
  'lightgbm',
  'PIL.Image',
);

// Which files are the training table and the sample submission: the task's own names (MLE-bench
// competitions keep theirs, e.g. labels.csv and sample_submission_null.csv), else the usual ones.
const FIND_FILES = `import os
import pandas as pd
files = sorted(os.listdir("public"))
csvs = [f for f in files if f.endswith(".csv")]
sample_name = "sample_submission.csv" if "sample_submission.csv" in csvs else next((f for f in csvs if "sample" in f.lower()), "sample_submission.csv")
train_name = "train.csv" if "train.csv" in csvs else next((f for f in csvs if f not in ("test.csv", sample_name)), "train.csv")
train = pd.read_csv(os.path.join("public", train_name))`;

export const INSPECT = `${FIND_FILES}
test = pd.read_csv("public/test.csv")
sample = pd.read_csv(os.path.join("public", sample_name))
print("public/:", files)
print(train_name, train.shape, "test", test.shape)
print(train.head())
print(sample_name, "columns:", list(sample.columns))`;

export const DESCRIBE = `${FIND_FILES}
print(train.describe(include="all").T.head(30))
print("missing per column:")
print(train.isna().mean().sort_values(ascending=False).head(10))`;

export function solveCode(
  strategy: string,
  kitSaved: boolean,
  opts: { keepBest?: boolean; size?: string } = {},
): string {
  const args = [
    JSON.stringify(strategy),
    ...((opts.keepBest ?? true) ? ['keep_best=True'] : []),
    ...(opts.size && opts.size !== 'default' ? [`size=${JSON.stringify(opts.size)}`] : []),
  ];
  const call = `solve(${args.join(', ')})`;
  if (kitSaved) return `import sys\nsys.path.insert(0, ".")\nfrom mlekit import solve\n${call}`;
  return `${kitSource()}\n\nif __name__ == "__main__":\n    import shutil\n    shutil.copyfile(__file__, "mlekit.py")  # reused by the next steps\n    ${call}`;
}

/** Whether an earlier solving step saved the kit (it is copied before solving starts, so any not killed did). */
export function kitSaved(
  history: readonly { action: string; timed_out: boolean; code?: string }[],
  isSolve: (i: number) => boolean,
): boolean {
  return history.some((h, i) => isSolve(i) && h.action === 'code' && !h.timed_out);
}

export const fence = (code: string) => '```python\n' + code + '\n```';

export type ReactAct =
  { kind: 'code'; code: string } | { kind: 'validate'; path: string } | { kind: 'answer'; path: string };

/** One ReAct reply in the format the scaffold parses: mlepipe's tags (default), or the released code's tool calls. */
export function reactText(
  format: PolicyRequest['promptFormat'],
  think: string,
  act: ReactAct,
  taskId = 'task',
): string {
  // The release's Score tool needs the competition's id.
  if (format === 'sandmle-release') return releaseReply(think, act, taskId);
  const body = act.kind === 'code' ? fence(act.code) : `<${act.kind}>${act.path}</${act.kind}>`;
  return `<think>${think}</think>\n${body}`;
}
