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

from . import partition

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


# Lines on either side of a fault's change where the starter may hold no comment: a comment there
# describes what the line does in one configuration and so tells the other apart without diagnosis.
COMMENT_REACH = 3


def comment_tells(t):
    """Comments on or near a line some fault changes (in the healthy or the faulty starter), as (config, line, text)."""
    out = []
    for name, swaps in t.faults.items():
        for code, frags in ((t.code, [h for h, _ in swaps]), (starter(t, name)[0], [f for _, f in swaps])):
            lines = code.split('\n')
            for frag in frags:
                first = code[: code.index(frag)].count('\n')
                last = first + frag.rstrip('\n').count('\n')
                for i in range(max(0, first - COMMENT_REACH), min(len(lines), last + COMMENT_REACH + 1)):
                    if '#' in lines[i]:
                        out.append((name, i + 1, lines[i].strip()))
    return sorted(set(out))


def register(t):
    for name, swaps in t.faults.items():
        for healthy, _faulty in swaps:
            if t.code.count(healthy) != 1:
                raise AssertionError(f'{t.name}/{name}: fragment not unique in the starter: {healthy!r}')
    tells = comment_tells(t)
    if tells:
        raise AssertionError(
            f'{t.name}: a comment near a fault tells the configuration: '
            + '; '.join(f'{c} line {n}: {s}' for c, n, s in tells)
        )
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


def success_line(b, lower):
    """Eq. 5's line: a score must pass it (below when lower is better) to count as a success."""
    return b - max(0.1 * abs(b), DELTA) if lower else b + max(0.1 * abs(b), DELTA)


DOMAIN_NAMES = {
    'vision': 'vision',
    'cv': 'vision',
    'nlp': 'NLP',
    'tabular': 'tabular learning',
    'time_series': 'time series',
    'graph': 'graph learning',
}


def describe(t, inst, data, sample_head, baseline):
    """The task prompt's fields (TASK ID to RESOURCE BUDGET), filled from what the agent may know."""
    files = sorted(k for k in data['files'] if '/' not in k)
    test = partition.test_table(data['files'])
    valid = partition.valid_table(test)
    for folder in sorted({k.split('/')[0] for k in data['files'] if '/' in k}):
        files.append(f'{folder}/ (PNG files named by id)')
    b, sd, runs = baseline
    better = 'lower' if t.lower else 'higher'
    line = success_line(b, t.lower)
    lines = [
        f'TASK ID: {inst["id"]}',
        f'TASK DOMAIN: {DOMAIN_NAMES.get(t.domain, t.domain)}',
        f'OBJECTIVE: {t.source}, {t.objective}. {t.about}',
        'WORKSPACE: the current folder; the task files are read-only under `public/`.',
        'STARTER FILES: `public/train.py` trains a model and writes `submission.csv`: `python public/train.py --seed 0` (`--data DIR` reads the task files from DIR, `--out FILE` writes the submission to FILE).',
        'DATA: ' + ', '.join(f'`public/{f}`' for f in files) + '.',
        f'SPLIT POLICY: fit on the training files and validate on `public/{valid}` (the same format as `public/{test}`), whose true values are in `public/valid_answers.csv` (scored by the same metric); the test labels are hidden and only the evaluator reads them. The validation and test partitions: {partition.policy(t.name).about}.',
        f"METRIC: {data['grading']['metric']}, {better} is better.",
        f'BASELINE: the starter scores {b:.6g} on the hidden test split (mean over seeds 0-{runs - 1}, standard deviation {sd:.3g}).',
        f'SUCCESS RULE: a valid submission succeeds when its score is {better} than the baseline by more than max(0.1 * |baseline|, 0.01), i.e. {"below" if t.lower else "above"} {line:.6g}.',
        'REQUIRED ARTIFACT: `submission.csv` in the workspace, in the format of `public/sample_submission.csv`:',
        '',
        '```',
        sample_head,
        '```',
        '',
        'EDIT CONSTRAINTS: write and edit your own files in the workspace; `public/` and the evaluator cannot be changed.',
        'RESOURCE BUDGET: the actions and seconds per script execution the run allows (see Limits).',
        '',
        'Complete the task using the registered actions. The final held-out assessment is performed by the evaluator under the split policy.',
        '',
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


def build(inst, dest, runs=10, cache=None):
    """Writes one instance (a manifest entry) to dest, drawn again from the next seed while Eq. 5 is out of reach."""
    from . import attain

    t = TEMPLATES[inst['template']]
    dest = os.path.abspath(dest)
    tries = []
    for k in range(attain.TRIES):
        seed = inst['seed'] + k
        task, code, scores, oracle = _build_one({**inst, 'seed': seed}, dest, runs)
        healthy = starter(t, 'healthy')[0]
        grade = _grade_fn()
        n = len(scores)
        tries.append(
            attain.check(
                t,
                inst,
                seed,
                scores,
                lambda healthy=healthy, grade=grade, n=n: [run_starter(dest, healthy, s, grade) for s in range(n)],
                oracle,
                cache,
            )
        )
        if tries[-1]['passed']:
            break
    else:
        if inst['config'] != 'healthy':
            raise RuntimeError(f"{inst['id']}: Eq. 5 is out of reach on every seed tried: " + json.dumps(tries))
        # A healthy instance whose line is past the metric's best, or past the oracle's score, on every seed:
        # no seed repairs that, only the template could. It is kept from its registered seed, marked out of reach.
        task, code, scores, _ = _build_one(inst, dest, runs)
    # The record stays out of the agent's sight (it says whether a reference exists); task.json says which seed was used.
    with open(os.path.join(dest, 'private', 'attainability.json'), 'w') as fh:
        json.dump(
            {
                'rule': 'the fix (a healthy instance: the Bayes oracle, inside the metric bound) clears Eq. 5 over the baseline seeds',
                'seeds': runs,
                'registered_seed': inst['seed'],
                'tries': tries,
                'attainable': tries[-1]['passed'],
            },
            fh,
            indent=1,
        )
    task['generation'] = {
        'registered_seed': inst['seed'],
        'seed': task['seed'],
        'redrawn': len(tries) - 1 if tries[-1]['passed'] else 0,
    }
    task['files'] = file_digests(dest)
    with open(os.path.join(dest, 'task.json'), 'w') as fh:
        json.dump(task, fh, indent=2)
        fh.write('\n')
    return task


def _grade_frame(frame, dest, grade):
    """A submission's score, the frame written where the task's evaluator reads it and removed after."""
    path = os.path.join(dest, '.oracle_run.csv')
    try:
        _write_frame(frame, path)
        return grade(path, os.path.join(dest, 'private'))[0]
    finally:
        os.remove(path)


def _build_one(inst, dest, runs):
    """Writes one instance from its seed: public/, private/, task.json; gives the task, the starter, its scores and the oracle's."""
    t = TEMPLATES[inst['template']]
    dest = os.path.abspath(dest)
    rng = np.random.default_rng(inst['seed'])
    data, units = partition.split(t.name, t.make(rng), inst['seed'])
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
    _write_frame(data['answer'], os.path.join(priv, 'answer.csv'))
    grading = dict(data['grading'], is_lower_better=t.lower)
    with open(os.path.join(priv, 'grading.json'), 'w') as fh:
        json.dump(grading, fh, indent=1, sort_keys=True)
    shutil.copyfile(os.path.join(HERE, 'grade.py'), os.path.join(priv, 'evaluator.py'))
    with open(os.path.join(priv, 'fault.json'), 'w') as fh:
        json.dump(
            {'config': inst['config'], 'fault': None if inst['config'] == 'healthy' else inst['config'], 'fix': fix},
            fh,
            indent=1,
        )
    grade = _grade_fn()
    scores = [run_starter(dest, code, s, grade) for s in range(runs)]
    b, sd = float(np.mean(scores)), float(np.std(scores))
    head = '\n'.join(open(os.path.join(pub, 'sample_submission.csv')).read().split('\n')[:4])
    with open(os.path.join(pub, 'description.md'), 'w') as fh:
        fh.write(describe(t, inst, data, head, (b, sd, runs)))
    grading['thresholds'] = {
        'median_threshold': round(b, 6),
        'bronze_threshold': round(success_line(b, t.lower), 6),
        'silver_threshold': None,
        'gold_threshold': None,
    }
    with open(os.path.join(priv, 'grading.json'), 'w') as fh:
        json.dump(grading, fh, indent=1, sort_keys=True)
    with open(os.path.join(priv, 'spec.json'), 'w') as fh:
        # the starter's baseline b, which eval reads for Eq. 5's success
        json.dump(
            {'starter_score': round(b, 6), 'starter_std': round(sd, 6), 'template': t.name, 'config': inst['config']},
            fh,
            indent=1,
        )
    task = {
        'id': inst['id'],
        'generator': 'mltoolbench',
        'split': inst['split'],
        'domain': t.domain,
        'template': t.name,
        'modality': t.domain,
        'metric': data['grading']['metric'],
        'is_lower_better': t.lower,
        'seed': inst['seed'],
        'baseline': {'mean': round(b, 6), 'std': round(sd, 6), 'runs': runs, 'scores': [round(s, 6) for s in scores]},
        'partition': {
            'policy': partition.policy(t.name).about,
            'units': {k: len(v) for k, v in units.items()},
            'rows': {'valid': len(data['files']['valid_answers.csv']), 'test': len(data['answer'])},
        },
    }
    # The generator's own best prediction of the hidden rows, scored like a submission and never written
    # into the task: what the data allow, for the attainability check.
    return task, code, scores, _grade_frame(data['oracle'], dest, grade)
