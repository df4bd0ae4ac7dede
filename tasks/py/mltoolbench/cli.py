"""Command line of the suite: the manifest, building an instance, checking a fault."""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

# Imported for what they do on import: each registers its templates, in this order.
from . import graph, nlp, nlp_order, tabular, tabular_science, timeseries, vision  # noqa: F401
from .core import DELTA, TEMPLATES, _grade_fn, apply_fix, build, run_starter, starter
from .manifest import instances


def manifest():
    rows = []
    for inst in instances():
        t = TEMPLATES[inst['template']]
        rows.append(
            {
                **inst,
                'source': t.source,
                'objective': t.objective,
                'metric': t.metric,
                'direction': 'minimize' if t.lower else 'maximize',
            }
        )
    return {'version': 'mltb-v1', 'instances': rows}


def find(instance_id):
    for inst in instances():
        if instance_id in (inst['id'], inst['id'][len('mltb-v1-') :]):
            return inst
    raise SystemExit(json.dumps({'error': f'no instance {instance_id}'}))


def check(inst, runs):
    """Starter (faulty) against its fix on the same data, `runs` seeds each."""
    with tempfile.TemporaryDirectory() as d:
        task = build(inst, os.path.join(d, 't'), runs=runs)
        fault = json.load(open(os.path.join(d, 't', 'private', 'fault.json')))
        code = open(os.path.join(d, 't', 'public', 'train.py')).read()
        fixed = apply_fix(code, fault['fix'])
        grade = _grade_fn()
        f = [run_starter(os.path.join(d, 't'), fixed, s, grade) for s in range(runs)]
    b, m = task['baseline']['mean'], float(np.mean(f))
    sign = -1 if task['is_lower_better'] else 1
    return {
        'id': inst['id'],
        'template': inst['template'],
        'config': inst['config'],
        'lower': task['is_lower_better'],
        'starter': b,
        'fixed': m,
        'starter_std': task['baseline']['std'],
        'fixed_std': float(np.std(f)),
        # the fix is the healthy starter, and it succeeds by Eq. 5 against the faulty one's baseline
        'fix_is_healthy': fixed == starter(TEMPLATES[inst['template']], 'healthy')[0],
        'fix_succeeds': sign * (m - b) > max(0.1 * abs(b), DELTA),
    }


def main():
    ap = argparse.ArgumentParser(prog='mltoolbench')
    sub = ap.add_subparsers(dest='cmd', required=True)
    m = sub.add_parser('manifest')
    m.add_argument('dest', nargs='?')
    b = sub.add_parser('build')
    b.add_argument('ids', nargs='+')
    b.add_argument('--out', required=True)
    b.add_argument('--runs', type=int, default=10)
    b.add_argument('--seed', type=int, help='a generation seed other than the registered one')
    b.add_argument('--cache', help='a folder keeping the attainability check\'s fix scores by content')
    c = sub.add_parser('check')
    c.add_argument('ids', nargs='+')
    c.add_argument('--runs', type=int, default=2)
    c.add_argument('--seed', type=int)
    a = ap.parse_args()
    if a.cmd == 'manifest':
        text = json.dumps(manifest(), indent=1)
        if a.dest:
            open(a.dest, 'w').write(text + '\n')
        else:
            print(text)
        return
    for i in a.ids:
        inst = find(i)
        if a.seed is not None:
            inst = {**inst, 'seed': a.seed}
        if a.cmd == 'build':
            t = build(inst, os.path.join(a.out, inst['id']), runs=a.runs, cache=a.cache)
            print(json.dumps({'id': inst['id'], 'baseline': t['baseline'], 'generation': t['generation']}), flush=True)
        else:
            print(json.dumps(check(inst, a.runs)), flush=True)


if __name__ == '__main__':
    sys.exit(main())
