// The edits the scripted mlab agents make to a task's starter script: each
// issue names a kind of problem and carries what a diagnostic tool said; the
// edit looks for the code that problem shows up as and changes only that.
// `diagnose` asks for the issues its tool answers (and its reading of the
// script) reveal; `blind` asks for one fixed change whatever the task.

/** An issue as written in an Edit Script instruction: `ISSUE <kind>[: <detail>]`. */
export interface Issue {
  kind: string;
  detail: string;
}

export function formatIssues(issues: readonly Issue[]): string {
  return issues.map((i) => `ISSUE ${i.kind}${i.detail ? `: ${i.detail}` : ''}`).join('\n');
}

export function parseIssues(instruction: string): Issue[] {
  return [...instruction.matchAll(/^ISSUE ([\w-]+)(?:: (.*))?$/gm)].map((m) => ({ kind: m[1], detail: m[2] ?? '' }));
}

/** Values of hyperparameters outside a range that training usually needs, and where to put them back. */
const RANGES: Array<{ re: RegExp; bad: (v: number) => boolean; to: string }> = [
  { re: /\bC=([0-9.e+-]+)/g, bad: (v) => v < 0.01, to: 'C=1.0' },
  { re: /\balpha=([0-9.e+-]+)/g, bad: (v) => v > 100, to: 'alpha=1.0' },
  { re: /\bn_neighbors=(\d+)/g, bad: (v) => v >= 100, to: 'n_neighbors=8' },
  { re: /\bmax_features=(\d+)/g, bad: (v) => v < 200, to: 'max_features=5000' },
  { re: /^MAXLEN = (\d+)/gm, bad: (v) => v < 32, to: 'MAXLEN = 128' },
  { re: /^MAXWORDS = (\d+)/gm, bad: (v) => v < 16, to: 'MAXWORDS = 200' },
  { re: /^THRESHOLD = ([0-9.]+)/gm, bad: (v) => v >= 0.9 || v <= 0.1, to: 'THRESHOLD = 0.5' },
  { re: /^TEMPERATURE = ([0-9.]+)/gm, bad: (v) => v < 0.5, to: 'TEMPERATURE = 1.0' },
  { re: /^ERASE = ([0-9.]+)/gm, bad: (v) => v > 0.5, to: 'ERASE = 0.2' },
  { re: /^CONTRAST = ([0-9.]+)/gm, bad: (v) => v > 3 || v < 0.3, to: 'CONTRAST = 1.0' },
  { re: /^SHEAR = ([0-9.]+)/gm, bad: (v) => v > 0.5, to: 'SHEAR = 0.1' },
  { re: /^MARGIN = (\d+)/gm, bad: (v) => v >= 4, to: 'MARGIN = 1' },
  { re: /^HOPS = (\d+)/gm, bad: (v) => v > 6, to: 'HOPS = 2' },
  { re: /^ROUNDS = (\d+)/gm, bad: (v) => v < 3, to: 'ROUNDS = 4' },
  { re: /^FANOUT = (\d+)/gm, bad: (v) => v < 3, to: 'FANOUT = None' },
  { re: /\b1: (0\.0\d*)\}/g, bad: (v) => v < 0.2, to: '1: 1.0}' },
];

/** The hyperparameter settings of a script that fall outside RANGES, as `NAME=VALUE` strings. */
export function suspiciousSettings(code: string): string[] {
  const out: string[] = [];
  for (const r of RANGES) for (const m of code.matchAll(r.re)) if (r.bad(Number(m[1]))) out.push(m[0].trim());
  return out;
}

function fixSettings(code: string): string {
  for (const r of RANGES) code = code.replace(r.re, (all, v: string) => (r.bad(Number(v)) ? r.to : all));
  return code;
}

/** Inserts `line` after the first line matching `after` (keeping its indentation), unless it is there already. */
function insertAfter(code: string, after: RegExp, line: string): string {
  if (code.includes(line)) return code;
  const lines = code.split('\n');
  const i = lines.findIndex((l) => after.test(l));
  if (i < 0) return code;
  lines.splice(i + 1, 0, line);
  return lines.join('\n');
}

const EDITS: Record<string, (code: string, detail: string) => string> = {
  // image_normalization_stats: pixels are 0-255.
  'pixel-range': (code) => {
    if (/\/ 255/.test(code)) return code;
    code = code.replace(/^Xtr, Xte = Xtr - [\d.]+, Xte - [\d.]+\n/m, '');
    return insertAfter(code, /^ytr = train\['label'\]/, 'Xtr, Xte = Xtr / 255.0, Xte / 255.0');
  },
  // image_normalization_stats: the data's own means are on the 0-1 scale; constants on the 0-255 scale do not fit.
  'normalization-constants': (code) =>
    code.replace(
      /^MEAN, STD = np\.array\(\[\d{2,}[^\n]*$/m,
      'MEAN, STD = Xtr.mean(axis=(0, 1, 2)), Xtr.std(axis=(0, 1, 2))',
    ),
  // node_feature_health / check_feature_normalization: scales differ by orders of magnitude.
  standardize: (code) =>
    code
      .replace(/^X = X - X\.mean\(0\)$/m, 'X = (X - X.mean(0)) / X.std(0)')
      .replace(/^Xtr, Xte = Xtr, Xte$/m, 'Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)')
      .replace(
        /^mu, sd = train\[(\w+)\]\.to_numpy\(\)\.mean\(\), train\[\1\]\.to_numpy\(\)\.std\(\)$/m,
        'mu, sd = train[$1].mean().to_numpy(), train[$1].std().to_numpy()',
      ),
  // stationarity_test_adf: the series' level drifts, so each window is scaled against its own.
  'level-drift': (code) => code.replace(/^level = lambda w: S\.mean\(0\)/m, 'level = lambda w: w.mean(0)'),
  // detect_missing_values: constant fills of the named columns become the training median (numbers) or a category of their own.
  'missing-values': (code, detail) => {
    for (const col of detail
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean)) {
      const lines = code.split('\n').map((l) => {
        if (!l.includes(`'${col}'`) || !/\.fillna\(/.test(l)) return l;
        return l
          .replace(/\.fillna\((-?[\d.]+)\)/, `.fillna(train['${col}'].median())`)
          .replace(/\.fillna\('([^']*)'\)/, (all, v: string) => (v === 'Unknown' ? all : ".fillna('Unknown')"));
      });
      code = lines.join('\n');
    }
    return code;
  },
  // detect_label_imbalance: the labels are balanced, so a per-class training subsample only skews the model.
  'class-sampling': (code) =>
    code.replace(/^(keep = rng\.random\(len\((\w+)\)\)) < np\.where\(.*, ([\d.]+)\)$/m, '$1 < $3'),
  // Reading the script: hyperparameters outside their usual range.
  settings: (code) => fixSettings(code),
  // Reading the script: the target is transformed for training and never transformed back.
  'target-transform': (code) => {
    const predLine = /^pred = model\.predict\(/;
    if (/np\.log1p\(/.test(code) && !/np\.expm1\(/.test(code))
      code = insertAfter(code, predLine, 'pred = np.expm1(pred)');
    if (/\(y - mu\) \/ sd/.test(code) && !/\* sd \+ mu/.test(code))
      code = insertAfter(code, predLine, 'pred = pred * sd + mu');
    return code;
  },
  // Reading the script: the output columns are written in another order than the model's.
  'output-order': (code) => code.replace(/enumerate\(sorted\((\w+)\)\)/g, 'enumerate($1)'),
  // blind's fixed recipe: more optimisation steps, whatever the task.
  'train-longer': (code) => code.replace(/max_iter=(\d+)/g, (_, n: string) => `max_iter=${Number(n) * 3}`),
};

export const ISSUE_KINDS = Object.keys(EDITS);

/** The script with every issue's edit applied (unknown kinds change nothing). */
export function applyIssues(code: string, issues: readonly Issue[]): string {
  for (const i of issues) code = EDITS[i.kind]?.(code, i.detail) ?? code;
  return code;
}
