"""The data partitions inside an instance (App. F): model-fit, public validation, hidden test.

A template generates its model-fit rows (the training files) and its held-out rows (the test table
and the answers). This module cuts the held-out rows into a public validation half, written as
`valid.csv` (the test table's format) with its true values in `valid_answers.csv` (the answers'
format), and a hidden test half, which stays the test table and `private/answer.csv`. The model-fit
rows are untouched, so a starter trains on exactly the rows it did before; with the templates'
70/30 fit/held-out shares that gives the paper's 70/15/15.

What is cut is a unit, never a row: the grading id for independent examples, the group for
grouped ones (a sentence, a breath, a notebook, a small graph), so no group spans two partitions;
and for series a time block in the order the test table lists them, with an embargo of
`embargo` units dropped before each block, so no window of one block overlaps the next (the fit
block ends where the held-out rows begin). A procedural source has no finite pool to cut 60/40
into meta-training and ID: an ID instance draws its rows from a generation seed of its own, so no
row of it is in any training instance.
"""

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
import pandas as pd

# The lookback and horizon of the suite's forecasting windows: a forecast window spans both, so one
# window dropped between blocks is an embargo of lookback plus horizon.
LOOKBACK, HORIZON = 48, 12


@dataclass(frozen=True)
class Policy:
    unit: Optional[str] = None  # the test table's column that groups rows (None: the grading id)
    answer_unit: Optional[Callable[[str], object]] = (
        None  # an answer id's unit, where answers are not rows of the test table
    )
    chronological: bool = False
    embargo: int = 0  # units dropped before each block, chronological only
    about: str = 'examples are independent: a random half of them'


def _window(answer_id):
    return answer_id.rsplit('_', 1)[0]


def _step(answer_id):
    return int(answer_id.split('_', 1)[0])


FORECAST = Policy(
    unit='window',
    answer_unit=_window,
    chronological=True,
    embargo=1,
    about=f'chronological blocks of windows, one window ({LOOKBACK}+{HORIZON} steps, lookback plus horizon) dropped before each block',
)
# The template names of grouped and series sources; every other template's examples are independent.
POLICIES = {
    'nlp-textnorm': Policy(unit='sentence_id', about='grouped by sentence: a sentence is wholly in one partition'),
    'nlp-ai4code': Policy(unit='notebook', about='grouped by notebook: a notebook is wholly in one partition'),
    'graph-clrs': Policy(unit='graph', about='grouped by graph: every node of a graph is in one partition'),
    'graph-cora': Policy(
        about='transductive: the graph and every feature are shared, the labelled node sets are disjoint'
    ),
    'graph-citeseer': Policy(
        about='transductive: the graph and every feature are shared, the labelled node sets are disjoint'
    ),
    'graph-arxiv': Policy(
        about='transductive: the graph and every feature are shared, the labelled node sets are disjoint'
    ),
    'graph-bbbp': Policy(about='by molecule: these molecules are acyclic, so each is its own scaffold group'),
    'graph-bace': Policy(about='by molecule: these molecules are acyclic, so each is its own scaffold group'),
    'cv-aptos': Policy(about='by image: each image is its own patient in this source'),
    'cv-rsna': Policy(about='by image: each image is its own patient in this source'),
    'ts-etth-forecast': FORECAST,
    'ts-weather': FORECAST,
    'ts-ecl': FORECAST,
    'ts-etth-impute': Policy(
        unit='step',
        answer_unit=_step,
        chronological=True,
        embargo=LOOKBACK + HORIZON,
        about=f'chronological blocks of steps, {LOOKBACK + HORIZON} steps (lookback plus horizon) dropped before each block',
    ),
    'ts-ventilator': Policy(unit='breath_id', about='grouped by breath: a breath is wholly in one partition'),
    'ts-crypto': Policy(
        unit='timestamp',
        chronological=True,
        embargo=2,
        about='chronological blocks of timestamps, 2 (a lag-1 feature plus the next return) dropped before each block',
    ),
}


def policy(template):
    return POLICIES.get(template, Policy())


def test_table(files):
    names = [k for k, v in files.items() if isinstance(v, pd.DataFrame) and k.split('/')[-1].startswith('test')]
    if len(names) != 1:
        raise AssertionError(f'a template writes one test table, not {names}')
    return names[0]


def valid_table(test):
    """The validation inputs' file beside the test table: `test.csv` gives `valid.csv`, `test_nodes.csv` `valid_nodes.csv`."""
    return test.replace('test', 'valid', 1)


def split(name, data, seed):
    """The template's data with its held-out rows cut into validation and test; the units of each, for checks."""
    pol = policy(name)
    files, answer, idc = dict(data['files']), data['answer'], data['grading']['id']
    table = test_table(files)
    test = files[table]
    col = pol.unit or idc
    units = list(dict.fromkeys(test[col]))
    if pol.chronological:
        e = pol.embargo
        half = (len(units) - 2 * e) // 2
        if half < 1:
            raise AssertionError(f'{name}: {len(units)} held-out units leave no block after an embargo of {e}')
        valid, hidden = units[e : e + half], units[2 * e + half :]
    else:
        # A generator of its own: the partition must not move the template's draws.
        order = np.random.default_rng([seed, 15]).permutation(len(units))
        valid = [units[i] for i in sorted(order[: len(units) // 2])]
        hidden = [units[i] for i in sorted(order[len(units) // 2 :])]
    if pol.answer_unit:
        of_answer = answer[idc].map(pol.answer_unit)
    elif col == idc:
        of_answer = answer[idc]
    else:
        of_answer = answer[idc].map(dict(zip(test[idc], test[col])))
    if of_answer.isna().any():
        raise AssertionError(f'{name}: answers without a unit in the test table')
    if not data['sample'][idc].reset_index(drop=True).equals(answer[idc].reset_index(drop=True)):
        raise AssertionError(f'{name}: the sample submission is not row for row the answers')

    def part(df, keys, of):
        # By position: the sample and the oracle are row for row the answers, whatever their index.
        return df[of.isin(keys).to_numpy()].reset_index(drop=True)

    files[table] = part(test, hidden, test[col])
    files[valid_table(table)] = part(test, valid, test[col])
    files['valid_answers.csv'] = part(answer, valid, of_answer)
    out = dict(
        data, files=files, answer=part(answer, hidden, of_answer), sample=part(data['sample'], hidden, of_answer)
    )
    if 'oracle' in data:
        out['oracle'] = part(data['oracle'], hidden, of_answer)
    kept = set(valid) | set(hidden)
    return out, {'valid': valid, 'test': hidden, 'dropped': [u for u in units if u not in kept]}
