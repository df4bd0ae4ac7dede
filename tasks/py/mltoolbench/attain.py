"""The attainability check a build makes: Eq. 5 must be within reach of a known solution.

For an instance with a fault, the reference is its fix (the healthy starter on the same data and
hidden partition): run on the baseline's seeds, its mean must beat the faulty starter's mean by
Eq. 5's margin. When it does not, the data drawn from that generation seed leave the fault too
small to matter, and the instance is drawn again from the next seed, up to TRIES seeds; every try
is recorded. A healthy instance has no fix (its starter is the best configuration the template
knows), so its reference is the template's Bayes oracle, the prediction the generating
process itself would make from its noise-free quantities: its score on the hidden partition must pass
the line, and the line must lie inside the metric's range. The oracle's score is recorded for every
instance.

The fix's scores can be kept in a cache folder, keyed by everything they depend on.
"""

import hashlib
import json
import os
import sys

import numpy as np

from .core import HERE, success_line

TRIES = 3

# The best value each higher-is-better metric can reach; a success line past it can never be crossed.
# Every lower-is-better metric here is an error or a loss, whose best is 0.
BEST = {'accuracy': 1, 'macro_f1': 1, 'auc': 1, 'mean_iou': 1, 'qwk': 1, 'pf1': 1, 'kendall_tau': 1, 'weighted_corr': 1}


def _generator_files(t):
    """The files of this package the template's data comes from: its own module's, and those of the package's
    modules it takes helpers from (nlp_order.py draws its vocabulary with nlp.py's words)."""
    mod = sys.modules.get(t.make.__module__)
    if mod is None:
        return set()
    package = mod.__name__.rpartition('.')[0]
    names = {mod.__name__} | {getattr(v, '__module__', None) for v in vars(mod).values() if callable(v)}
    return {
        sys.modules[n].__file__
        for n in names
        if n in sys.modules and n.rpartition('.')[0] == package and sys.modules[n].__file__
    }


def _digest(t, config, seed, runs):
    """Everything the fix's scores depend on: the generator's code, the template, the data seed, the seeds run."""
    h = hashlib.sha256()
    for path in sorted(
        {os.path.join(HERE, 'core.py'), os.path.join(HERE, 'partition.py'), os.path.join(HERE, 'grade.py')}
        | _generator_files(t)
    ):
        h.update(open(path, 'rb').read())
    h.update(json.dumps([t.name, config, seed, runs]).encode())
    return h.hexdigest()


def _fix_scores(t, config, seed, runs, run, cache):
    key = _digest(t, config, seed, runs)
    path = os.path.join(cache, f'{key}.json') if cache else None
    if path and os.path.exists(path):
        return json.load(open(path))['fix_scores']
    scores = run()
    if path:
        os.makedirs(cache, exist_ok=True)
        tmp = f'{path}.{os.getpid()}'
        with open(tmp, 'w') as fh:
            json.dump({'fix_scores': scores}, fh)
        os.replace(tmp, path)
    return scores


def check(t, inst, seed, scores, run_fix, oracle, cache=None):
    """One try's record: the starter's mean, the reference's (the fix's, when there is a fault), the oracle's, the line, passed."""
    b = float(np.mean(scores))
    line = success_line(b, t.lower)
    sign = -1 if t.lower else 1
    rec = {'seed': seed, 'starter': round(b, 6), 'line': round(line, 6), 'oracle': round(oracle, 6)}
    if inst['config'] == 'healthy':
        bound = bool(line > 0) if t.lower else bool(line < BEST.get(t.metric, float('inf')))
        rec.update(reference=None, bound=bound, passed=bound and bool(sign * (oracle - line) > 0))
        return rec
    fix = _fix_scores(t, inst['config'], seed, len(scores), run_fix, cache)
    m = float(np.mean(fix))
    rec.update(reference=round(m, 6), passed=bool(sign * (m - b) > max(0.1 * abs(b), 0.01)))
    return rec
