"""Tabular templates on scientific and public data: a material's formation energy and band gap (NOMAD), census
housing (California) and tumour diagnosis (breast cancer). The helpers they share are in tabular.py."""

import numpy as np
import pandas as pd

from .core import STARTER_HEAD, Template, register
from .tabular import _log1p_mean, _split


def _nomad(rng):
    n = 800
    x = rng.dirichlet([1, 1, 1], n)
    a, b, c = (rng.uniform(5, 12, n) for _ in range(3))
    sg = rng.choice([12, 33, 167, 194, 206, 227], n)
    vol = a * b * c
    m_fe = -1.5 + 1.2 * x[:, 0] - 0.8 * x[:, 2] + 0.002 * (vol - 500) / 10
    fe = np.exp(m_fe + rng.normal(0, 0.05, n)) * 0.2
    m_bg = 0.4 + 1.1 * x[:, 0] - 1.3 * x[:, 2] - 0.0008 * (vol - 500)
    bg = np.exp(m_bg + rng.normal(0, 0.05, n))
    df = pd.DataFrame(
        {
            'id': np.arange(n),
            'spacegroup': sg,
            'percent_atom_al': x[:, 0].round(4),
            'percent_atom_ga': x[:, 1].round(4),
            'percent_atom_in': x[:, 2].round(4),
            'lattice_vector_1_ang': a.round(3),
            'lattice_vector_2_ang': b.round(3),
            'lattice_vector_3_ang': c.round(3),
            'formation_energy_ev_natom': fe.round(5),
            'bandgap_energy_ev': bg.round(5),
        }
    )
    d = _split(df, ['formation_energy_ev_natom', 'bandgap_energy_ev'], 550, 0.5, 'rmsle')
    d['oracle'] = d['sample'].assign(
        formation_energy_ev_natom=np.expm1(_log1p_mean(m_fe[550:], 0.05, 0.2)),
        bandgap_energy_ev=np.expm1(_log1p_mean(m_bg[550:], 0.05)),
    )
    return d


NOMAD = '''from sklearn.neighbors import KNeighborsRegressor

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
TARGETS = ['formation_energy_ev_natom', 'bandgap_energy_ev']
FEATURES = ['percent_atom_al', 'percent_atom_ga', 'percent_atom_in', 'lattice_vector_1_ang', 'lattice_vector_2_ang', 'lattice_vector_3_ang']
SCALED = FEATURES
mu, sd = train[SCALED].mean(), train[SCALED].std()


def prepare(df):
    X = df[FEATURES].copy()
    X[SCALED] = (X[SCALED] - mu) / sd
    return X.to_numpy(float)


Y = np.log1p(train[TARGETS].to_numpy(float))
model = KNeighborsRegressor(n_neighbors=8 + args.seed % 3, weights='distance').fit(prepare(train), Y)
pred = model.predict(prepare(test))
pred = np.expm1(pred)
sub = pd.DataFrame(pred, columns=TARGETS)
sub.insert(0, 'id', test['id'])
sub.to_csv(args.out, index=False)
'''
register(
    Template(
        'tab-nomad',
        'tabular',
        'NOMAD2018 (procedural)',
        'formation energy and band gap of crystals',
        'rmsle',
        True,
        _nomad,
        STARTER_HEAD + NOMAD,
        {
            'missing target inverse': [('pred = np.expm1(pred)\n', 'pred = pred\n')],
            'descriptor scaling': [('SCALED = FEATURES\n', "SCALED = FEATURES[:3]\n")],
            'overstrong regularization': [
                (
                    "n_neighbors=8 + args.seed % 3, weights='distance'",
                    "n_neighbors=300 + args.seed % 3, weights='uniform'",
                )
            ],
        },
        'Predict `formation_energy_ev_natom` and `bandgap_energy_ev` of every crystal in `test.csv` (mean RMSLE over the two).',
    )
)


def _california(rng):
    n = 900
    inc = rng.lognormal(1.2, 0.4, n)
    rooms = 3 + 0.8 * inc + rng.normal(0, 0.4, n)
    age = rng.uniform(1, 52, n)
    value = 0.5 + 0.4 * inc + 0.05 * rooms + rng.normal(0, 0.2, n)
    df = pd.DataFrame(
        {
            'id': np.arange(n),
            'median_income': inc.round(4),
            'avg_rooms': rooms.round(4),
            'house_age': age.round(0),
            'median_value': value.round(4),
        }
    )
    tr = 600
    test = df.iloc[tr:].reset_index(drop=True)
    hidden = test['avg_rooms'].copy()
    test['avg_rooms'] = np.nan
    # rooms ~ N(3 + 0.8 income, 0.4) and value carries 0.05 rooms + N(0, 0.2): the Gaussian posterior mean of rooms
    prec = 1 / 0.4**2 + 0.05**2 / 0.2**2
    post = ((3 + 0.8 * inc) / 0.4**2 + 0.05 * (value - 0.5 - 0.4 * inc) / 0.2**2) / prec
    return {
        'files': {'train.csv': df.iloc[:tr].reset_index(drop=True), 'test.csv': test},
        'answer': pd.DataFrame({'id': test['id'], 'avg_rooms': hidden}),
        'sample': pd.DataFrame({'id': test['id'], 'avg_rooms': 5.0}),
        'oracle': pd.DataFrame({'id': test['id'], 'avg_rooms': post[tr:]}),
        'grading': {'metric': 'rmse', 'id': 'id', 'columns': ['avg_rooms']},
    }


CALIFORNIA = '''from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
OTHERS = ['median_income', 'house_age', 'median_value']
model = Ridge(alpha=1.0 + 0.1 * args.seed).fit(train[OTHERS], train['avg_rooms'])
fill = model.predict(test[OTHERS])
pd.DataFrame({'id': test['id'], 'avg_rooms': fill}).to_csv(args.out, index=False)
'''
register(
    Template(
        'tab-california',
        'tabular',
        'California Housing (procedural)',
        'reconstruct a withheld column',
        'rmse',
        True,
        _california,
        STARTER_HEAD + CALIFORNIA,
        {
            'global mean imputation': [
                ("fill = model.predict(test[OTHERS])", "fill = np.full(len(test), train['avg_rooms'].mean())")
            ]
        },
        '`avg_rooms` is missing from every row of `test.csv`; reconstruct it from the other columns (RMSE).',
    )
)


def _breast(rng):
    n = 800
    X = rng.normal(0, 1, (n, 6))
    logit = X[:, 0] * 1.0 - 0.8 * X[:, 1] + 0.5 * X[:, 2]
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    df = pd.DataFrame(X.round(4), columns=['radius', 'texture', 'smoothness', 'symmetry', 'concavity', 'fractal'])
    df.insert(0, 'id', np.arange(n))
    df['malignant'] = y
    d = _split(df, 'malignant', 550, 0.5, 'logloss_binary')
    d['oracle'] = d['sample'].assign(malignant=1 / (1 + np.exp(-logit[550:])))
    return d


BREAST = '''from sklearn.linear_model import LogisticRegression

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
FEATURES = [c for c in train.columns if c not in ('id', 'malignant')]
model = LogisticRegression(C=1.0 + 0.1 * args.seed).fit(train[FEATURES], train['malignant'])
logit = model.decision_function(test[FEATURES])
TEMPERATURE = 1.0
p = 1 / (1 + np.exp(-logit / TEMPERATURE))
pd.DataFrame({'id': test['id'], 'malignant': p}).to_csv(args.out, index=False)
'''
register(
    Template(
        'tab-breast-calibration',
        'tabular',
        'Breast Cancer Wisconsin (procedural)',
        'calibrated probability of malignancy',
        'logloss_binary',
        True,
        _breast,
        STARTER_HEAD + BREAST,
        {'overconfident probabilities': [('TEMPERATURE = 1.0', 'TEMPERATURE = 0.1')]},
        'Submit the probability that each tumour in `test.csv` is malignant (log loss).',
    )
)
