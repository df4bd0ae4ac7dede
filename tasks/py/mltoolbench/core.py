"""The template contract and the writer of one task instance.

A template is a procedural data source plus a healthy starter script. A
configuration is either healthy or names a fault: a list of (healthy, faulty)
fragments of the starter. The faulty starter is the healthy one with those
fragments swapped; its fix swaps them back, so the fix is exactly the healthy
code on the same data, and the gap it closes is measured on one partition.
"""
import contextlib
import hashlib
import io
import json
import os
import runpy
import shutil
import sys
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = {}

# Eq. 5's absolute-gain floor on the evaluator's own metric scale.
DELTA = 0.01

STARTER_HEAD = '''import argparse
import os

import numpy as np
import pandas as pd

parser = argparse.ArgumentParser()
parser.add_argument('--seed', type=int, default=0)
parser.add_argument('--data', default='public')
parser.add_argument('--out', default='submission.csv')
args = parser.parse_args()
rng = np.random.default_rng(args.seed)
D = args.data
'''


@dataclass
class Template:
    name: str
    domain: str
    source: str
    objective: str
    metric: str
    lower: bool
    make: Callable
    code: str
    faults: dict = field(default_factory=dict)
    about: str = ''


def register(t):
    for name, swaps in t.faults.items():
        for healthy, _faulty in swaps:
            if t.code.count(healthy) != 1:
                raise AssertionError(f'{t.name}/{name}: fragment not unique in the starter: {healthy!r}')
    TEMPLATES[t.name] = t
    return t


def starter(t, config):
    """The starter for a configuration, and the fix that turns it back into the healthy one."""
    code = t.code
    fix = []
    for healthy, faulty in t.faults.get(config, []):
        code = code.replace(healthy, faulty, 1)
        fix.append({'find': faulty, 'replace': healthy})
    if config != 'healthy' and config not in t.faults:
        raise KeyError(f'{t.name} has no configuration {config!r}')
    return code, fix


def apply_fix(code, fix):
    for f in fix:
        if f['find'] not in code:
            raise ValueError('the fix does not apply to this script')
        code = code.replace(f['find'], f['replace'], 1)
    return code


def _write_frame(df, path):
    df.to_csv(path, index=False, float_format='%.6g')


def _write_public(files, pub):
    from PIL import Image
    for rel, obj in sorted(files.items()):
        path = os.path.join(pub, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if isinstance(obj, pd.DataFrame):
            _write_frame(obj, path)
        elif isinstance(obj, np.ndarray) and rel.endswith('.png'):
            Image.fromarray(obj).save(path, optimize=False)
        elif isinstance(obj, np.ndarray):
            with open(path, 'wb') as fh:
                np.save(fh, obj, allow_pickle=False)
        else:
            with open(path, 'w') as fh:
                fh.write(obj)


def describe(t, data, sample_head):
    files = sorted(k for k in data['files'] if '/' not in k)
    for folder in sorted({k.split('/')[0] for k in data['files'] if '/' in k}):
        files.append(f'{folder}/ (PNG files named by id)')
    lines = [
        f'# {t.source}: {t.objective}', '', t.about, '',
        '## Files', '',
        *[f'- `{f}`' for f in files],
        '- `train.py`: a starter that trains a model and writes `submission.csv` (`python public/train.py --seed 0`)',
        '- `sample_submission.csv`: the submission format', '',
        '## Metric', '',
        f"{data['grading']['metric']}; {'lower' if t.lower else 'higher'} is better. The starter's score is the baseline to beat.", '',
        '## Submission', '', '```', sample_head, '```', '',
    ]
    return '\n'.join(lines)


def run_starter(task_dir, code, seed, grade):
    """Runs a starter in this process (no interpreter start per seed) and grades what it wrote."""
    script = os.path.join(task_dir, '.starter_run.py')
    out = os.path.join(task_dir, '.submission_run.csv')
    with open(script, 'w') as fh:
        fh.write(code)
    argv, cwd = sys.argv, os.getcwd()
    try:
        os.chdir(task_dir)
        sys.argv = [script, '--seed', str(seed), '--out', out]
        with contextlib.redirect_stdout(io.StringIO()), np.errstate(all='ignore'):
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                runpy.run_path(script, run_name='__main__')
        return grade(out, os.path.join(task_dir, 'private'))[0]
    finally:
        sys.argv = argv
        os.chdir(cwd)
        for p in (script, out):
            if os.path.exists(p):
                os.remove(p)


def _grade_fn():
    sys.path.insert(0, HERE)
    try:
        import grade as g
    finally:
        sys.path.pop(0)
    return g.grade


def file_digests(root):
    out = {}
    for base, _, names in os.walk(root):
        for n in names:
            p = os.path.join(base, n)
            rel = os.path.relpath(p, root)
            if rel == 'task.json':
                continue
            out[rel] = hashlib.sha256(open(p, 'rb').read()).hexdigest()
    return dict(sorted(out.items()))


def build(inst, dest, runs=10):
    """Writes one instance (a manifest entry) to dest: public/, private/, task.json."""
    t = TEMPLATES[inst['template']]
    dest = os.path.abspath(dest)
    rng = np.random.default_rng(inst['seed'])
    data = t.make(rng)
    if os.path.exists(dest):
        shutil.rmtree(dest)
    pub, priv = os.path.join(dest, 'public'), os.path.join(dest, 'private')
    os.makedirs(pub)
    os.makedirs(priv)
    _write_public(data['files'], pub)
    sample = data['sample']
    _write_frame(sample, os.path.join(pub, 'sample_submission.csv'))
    code, fix = starter(t, inst['config'])
    with open(os.path.join(pub, 'train.py'), 'w') as fh:
        fh.write(code)
    head = '\n'.join(open(os.path.join(pub, 'sample_submission.csv')).read().split('\n')[:4])
    with open(os.path.join(pub, 'description.md'), 'w') as fh:
        fh.write(describe(t, data, head))
    _write_frame(data['answer'], os.path.join(priv, 'answer.csv'))
    grading = dict(data['grading'], is_lower_better=t.lower)
    with open(os.path.join(priv, 'grading.json'), 'w') as fh:
        json.dump(grading, fh, indent=1, sort_keys=True)
    shutil.copyfile(os.path.join(HERE, 'grade.py'), os.path.join(priv, 'evaluator.py'))
    with open(os.path.join(priv, 'fault.json'), 'w') as fh:
        json.dump({'config': inst['config'], 'fault': None if inst['config'] == 'healthy' else inst['config'], 'fix': fix}, fh, indent=1)
    grade = _grade_fn()
    scores = [run_starter(dest, code, s, grade) for s in range(runs)]
    b, sd = float(np.mean(scores)), float(np.std(scores))
    sign = -1 if t.lower else 1
    grading['thresholds'] = {'median_threshold': round(b, 6), 'bronze_threshold': round(b + sign * max(0.1 * abs(b), DELTA), 6),
                             'silver_threshold': None, 'gold_threshold': None}
    with open(os.path.join(priv, 'grading.json'), 'w') as fh:
        json.dump(grading, fh, indent=1, sort_keys=True)
    with open(os.path.join(priv, 'spec.json'), 'w') as fh:
        # the starter's baseline b, which eval reads for Eq. 5's success
        json.dump({'starter_score': round(b, 6), 'starter_std': round(sd, 6), 'template': t.name, 'config': inst['config']}, fh, indent=1)
    task = {
        'id': inst['id'], 'generator': 'mltoolbench', 'split': inst['split'], 'domain': t.domain, 'template': t.name,
        'modality': t.domain, 'metric': data['grading']['metric'], 'is_lower_better': t.lower, 'seed': inst['seed'],
        'baseline': {'mean': round(b, 6), 'std': round(sd, 6), 'runs': runs, 'scores': [round(s, 6) for s in scores]},
    }
    task['files'] = file_digests(dest)
    with open(os.path.join(dest, 'task.json'), 'w') as fh:
        json.dump(task, fh, indent=2)
        fh.write('\n')
    return task
