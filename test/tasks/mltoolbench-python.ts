// What the MLToolBench suite's tests run in its Python package (tasks/py/mltoolbench): the suite's command and
// short scripts, and the scripts that probe its attainability check and its partitions.
import * as assert from 'uvu/assert';
import { execa } from 'execa';
import { join } from 'node:path';
import { pythonEnv } from '../../core/python.js';
import { ROOT } from '../helpers.js';

export const PY = pythonEnv('agent').python;
// No bytecode beside the sources: tasks/py is part of node keys.
export const suite = (args: string[], cwd = join(ROOT, 'tasks', 'py')) =>
  execa(PY, ['-m', 'mltoolbench', ...args], { cwd, reject: false, env: { PYTHONDONTWRITEBYTECODE: '1' } });
export const py = (code: string) =>
  execa(PY, ['-c', code], { cwd: join(ROOT, 'tasks', 'py'), reject: false, env: { PYTHONDONTWRITEBYTECODE: '1' } });
/** What a script's lines print as JSON, once it has exited cleanly. */
export async function pyJson<T>(lines: string[]): Promise<T> {
  const r = await py(lines.join('\n'));
  assert.is(r.exitCode, 0, r.stderr);
  return JSON.parse(r.stdout) as T;
}

/** A template registered with a fault too small to matter on any seed, and an instance of it. */
export const NULL_FAULT = [
  'import json, sys, tempfile',
  'from mltoolbench import cli, attain, core, tabular',
  'from mltoolbench.core import TEMPLATES, Template, register, build',
  "b = TEMPLATES['tab-breast-calibration']",
  "register(Template('t-null', 'tabular', 's', 'o', b.metric, True, b.make, b.code, {'nothing': [('TEMPERATURE = 1.0', 'TEMPERATURE = 1.01')]}))",
  "inst = {'id': 'x', 'template': 't-null', 'config': 'nothing', 'seed': 5, 'split': 'train', 'domain': 'tabular'}",
];

/** After NULL_FAULT: an attainability check that fails on the registered seed of tabular-id-05 only. */
export const REDRAW = [
  'real = attain.check',
  "attain.check = lambda t, i, seed, *a, **k: {**real(t, i, seed, *a, **k), 'passed': seed != 22009}",
  'd = tempfile.mkdtemp()',
  "task = build(next(i for i in cli.instances() if i['id'] == 'mltb-v1-tabular-id-05'), d, runs=2)",
  "print(json.dumps([task['generation'], json.load(open(d + '/private/attainability.json'))['tries']]))",
];

/** Every template's data from seed 41, cut by its partition policy: what the cut keeps apart, as JSON. */
export const PARTITION_CHECK = [
  'import json',
  'import numpy as np, pandas as pd',
  'from mltoolbench import cli, partition',
  'from mltoolbench.core import TEMPLATES',
  'out = {}',
  'for name, t in TEMPLATES.items():',
  '    data = t.make(np.random.default_rng(41))',
  '    cut, units = partition.split(name, data, 41)',
  '    f, pol, idc = cut["files"], partition.policy(name), data["grading"]["id"]',
  '    table = partition.test_table(f)',
  '    col = pol.unit or idc',
  '    ans = data["answer"].set_index(idc)',
  '    va, ta = f["valid_answers.csv"], cut["answer"]',
  '    fit = [v for k, v in f.items() if isinstance(v, pd.DataFrame) and k.startswith("train") and col in v.columns]',
  '    out[name] = {',
  '        "policy": pol.about, "chronological": pol.chronological, "embargo": pol.embargo,',
  '        "held_out": list(map(str, dict.fromkeys(data["files"][table][col]))),',
  '        "valid": list(map(str, dict.fromkeys(f[table.replace("test", "valid", 1)][col]))), "test": list(map(str, dict.fromkeys(f[table][col]))),',
  '        "fit_units": sorted({str(u) for v in fit for u in v[col]}),',
  '        "answer_ids": [len(va), len(ta), len(set(va[idc]) & set(ta[idc])), len(ans)],',
  '        "answers_kept": bool(ans.loc[va[idc]].reset_index().equals(va) and ans.loc[ta[idc]].reset_index().equals(ta)),',
  '        "sample_rows": cut["sample"][idc].tolist() == ta[idc].tolist(),',
  '    }',
  'print(json.dumps(out))',
];

/** What PARTITION_CHECK prints for one template. */
export interface PartitionCut {
  policy: string;
  chronological: boolean;
  embargo: number;
  held_out: string[];
  valid: string[];
  test: string[];
  fit_units: string[];
  answer_ids: number[];
  answers_kept: boolean;
  sample_rows: boolean;
}
