"""Tabular templates: tables with missing values, categories and skewed scales."""

import numpy as np
import pandas as pd
from scipy.special import expit
from scipy.stats import lognorm

from .core import STARTER_HEAD, Template, register


def _split(df, target, tr, sample_value, metric, **grading):
    test = df.iloc[tr:].reset_index(drop=True)
    cols = target if isinstance(target, list) else [target]
    return {
        'files': {'train.csv': df.iloc[:tr].reset_index(drop=True), 'test.csv': test.drop(columns=cols)},
        'answer': test[['id'] + cols],
        'sample': test[['id']].assign(**{c: sample_value for c in cols}),
        'grading': {'metric': metric, 'id': 'id', 'columns': cols, **grading},
    }


def _log1p_mean(m, sd, scale=1.0):
    """E[log1p(scale * exp(m + e))] for e ~ N(0, sd), sd a number or one per row: what an RMSLE oracle puts under expm1 (Gauss-Hermite)."""
    z, w = np.polynomial.hermite_e.hermegauss(20)
    return np.log1p(scale * np.exp(m[:, None] + np.reshape(sd, (-1, 1)) * z)) @ w / w.sum()


def _midpoints(lo, hi, k=2000):
    """k midpoints of equal steps from lo to hi, one row per row of lo and hi."""
    return lo[:, None] + (hi - lo)[:, None] * (np.arange(k) + 0.5) / k


def _house(rng):
    n = 900
    hood = rng.choice(list('ABCDEFGH'), n)
    effect = dict(zip('ABCDEFGH', rng.normal(0, 0.25, 8)))
    frontage = rng.normal(70, 15, n)
    quality = rng.integers(1, 11, n)
    area = rng.lognormal(9, 0.3, n)
    mean = 10.5 + 0.012 * frontage + 0.09 * quality + 0.3 * np.log(area) + np.array([effect[h] for h in hood])
    logp = mean + rng.normal(0, 0.08, n)
    front = np.where(rng.random(n) < 0.3, np.nan, frontage.round(1))
    df = pd.DataFrame(
        {
            'id': np.arange(n),
            'lot_frontage': front,
            'lot_area': area.round(0),
            'overall_quality': quality,
            'neighborhood': hood,
            'year_built': rng.integers(1900, 2010, n),
            'sale_price': np.exp(logp).round(0),
        }
    )
    d = _split(df, 'sale_price', 650, 180000, 'rmsle')
    # from the table: a hidden frontage ~ N(70, 15) widens the log price's noise to hypot(0.08, 0.012 * 15); the rounding of the shown values is negligible
    te = d['files']['test.csv']
    f = te['lot_frontage'].to_numpy()
    m = (
        10.5
        + 0.012 * np.where(np.isnan(f), 70, f)
        + 0.09 * te['overall_quality']
        + 0.3 * np.log(te['lot_area'])
        + te['neighborhood'].map(effect)
    )
    d['oracle'] = d['sample'].assign(
        sale_price=np.expm1(_log1p_mean(m.to_numpy(), np.where(np.isnan(f), np.hypot(0.08, 0.012 * 15), 0.08)))
    )
    return d


HOUSE = '''from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
NUMERIC = ['lot_frontage', 'lot_area', 'overall_quality', 'year_built']


def prepare(df, ref):
    X = df[NUMERIC].copy()
    X['lot_frontage'] = X['lot_frontage'].fillna(ref['lot_frontage'].median())
    X['lot_area'] = np.log(X['lot_area'])
    X = (X - ref_stats[0]) / ref_stats[1]
    hood = pd.get_dummies(df['neighborhood'].astype(pd.CategoricalDtype(sorted(ref['neighborhood'].unique()))), dtype=float)
    return np.c_[X.to_numpy(float), hood.to_numpy()]


base = train[NUMERIC].assign(lot_frontage=train['lot_frontage'].fillna(train['lot_frontage'].median()), lot_area=np.log(train['lot_area']))
ref_stats = (base.mean(), base.std())
y = np.log1p(train['sale_price'].to_numpy(float))
model = Ridge(alpha=1.0 + 0.1 * args.seed).fit(prepare(train, train), y)
pred = model.predict(prepare(test, train))
pred = np.expm1(pred)
pd.DataFrame({'id': test['id'], 'sale_price': pred}).to_csv(args.out, index=False)
'''
register(
    Template(
        'tab-house',
        'tabular',
        'House Prices (procedural)',
        'sale price regression',
        'rmsle',
        True,
        _house,
        STARTER_HEAD + HOUSE,
        {
            'zero imputation': [
                (
                    "X['lot_frontage'] = X['lot_frontage'].fillna(ref['lot_frontage'].median())",
                    "X['lot_frontage'] = X['lot_frontage'].fillna(0)",
                )
            ],
            'integer category encoding': [
                (
                    "    hood = pd.get_dummies(df['neighborhood'].astype(pd.CategoricalDtype(sorted(ref['neighborhood'].unique()))), dtype=float)\n    return np.c_[X.to_numpy(float), hood.to_numpy()]",
                    "    hood = df['neighborhood'].astype(pd.CategoricalDtype(sorted(ref['neighborhood'].unique()))).cat.codes\n    return np.c_[X.to_numpy(float), hood.to_numpy(float)]",
                )
            ],
            'missing target inverse': [('pred = np.expm1(pred)\n', 'pred = pred\n')],
        },
        'Predict `sale_price` of every house in `test.csv` (root mean squared log error).',
    )
)


def _spaceship(rng):
    n = 1000
    planet = rng.choice(['Earth', 'Europa', 'Mars'], n, p=[0.5, 0.25, 0.25])
    cryo = rng.random(n) < 0.35
    age = rng.uniform(1, 70, n)
    spend = np.where(cryo, 0, rng.lognormal(5, 1.2, n))
    miss_planet = rng.random(n) < 0.3
    logit = (
        0.5 * cryo
        - 0.03 * (spend - 150)
        + np.where(planet == 'Europa', 0.9, np.where(planet == 'Mars', -0.4, -3.0))
        + 7.0 * miss_planet
    )
    y = (rng.random(n) < 1 / (1 + np.exp(-2 * logit))).astype(int)
    df = pd.DataFrame(
        {
            'id': np.arange(n),
            'age': age.round(0),
            'home_planet': np.where(miss_planet, None, planet),
            'cryo_sleep': cryo.astype(int),
            'room_service': np.where(rng.random(n) < 0.25, np.nan, spend.round(0)),
            'vip': (rng.random(n) < 0.05).astype(int),
            'transported': y,
        }
    )
    d = _split(df, 'transported', 700, 1, 'accuracy')
    # the test table lists its columns in another order than the training table
    d['files']['test.csv'] = d['files']['test.csv'][['id', 'vip', 'room_service', 'cryo_sleep', 'home_planet', 'age']]
    # from the table: the spend is 0 in cryo sleep, else lognormal(5, 1.2) within the shown value's rounding step (anywhere if hidden),
    # taken at the midpoints of equal-probability steps; a hidden planet is Earth, Europa or Mars with its prior 0.5, 0.25, 0.25
    te = d['files']['test.csv']
    rs, cold, miss = te['room_service'].to_numpy(), te['cryo_sleep'].to_numpy(), te['home_planet'].isna().to_numpy()
    shown = ~np.isnan(rs)
    F = lognorm(1.2, scale=np.exp(5))
    s = np.where(
        cold[:, None] == 1,
        0,
        F.ppf(_midpoints(F.cdf(np.where(shown, np.maximum(rs - 0.5, 0), 0)), F.cdf(np.where(shown, rs + 0.5, np.inf)))),
    )
    w = np.where(miss[:, None], [0.5, 0.25, 0.25], te['home_planet'].to_numpy()[:, None] == ['Earth', 'Europa', 'Mars'])
    z = (
        0.5 * cold[:, None, None]
        - 0.03 * (s[:, None] - 150)
        + np.array([-3.0, 0.9, -0.4])[:, None]
        + 7.0 * miss[:, None, None]
    )
    d['oracle'] = d['sample'].assign(transported=((expit(2 * z).mean(2) * w).sum(1) > 0.5).astype(int))
    return d


SPACESHIP = '''from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
FEATURES = ['age', 'cryo_sleep', 'room_service', 'vip']


def prepare(df):
    X = df[FEATURES].copy()
    X['room_service'] = X['room_service'].fillna(train['room_service'].median())
    planet = df['home_planet'].fillna('Unknown')
    for p in ['Earth', 'Europa', 'Mars', 'Unknown']:
        X['planet_' + p] = (planet == p).astype(float)
    return X.to_numpy(float)


Xtr = prepare(train)
Xte = prepare(test)
scaler = StandardScaler().fit(Xtr)
model = LogisticRegression(C=1.0 + 0.1 * args.seed, max_iter=500).fit(scaler.transform(Xtr), train['transported'])
pd.DataFrame({'id': test['id'], 'transported': model.predict(scaler.transform(Xte))}).to_csv(args.out, index=False)
'''
register(
    Template(
        'tab-spaceship',
        'tabular',
        'Spaceship Titanic (procedural)',
        'binary: was the passenger transported',
        'accuracy',
        False,
        _spaceship,
        STARTER_HEAD + SPACESHIP,
        {
            'numeric missing sentinel': [
                (
                    "X['room_service'] = X['room_service'].fillna(train['room_service'].median())",
                    "X['room_service'] = X['room_service'].fillna(-99999)",
                )
            ],
            'categorical missing collision': [
                ("planet = df['home_planet'].fillna('Unknown')", "planet = df['home_planet'].fillna('Earth')")
            ],
            'column order mismatch': [
                ("    X = df[FEATURES].copy()\n", "    X = df[[c for c in df.columns if c in FEATURES]].copy()\n")
            ],
        },
        'Predict `transported` (1 or 0) for every passenger in `test.csv` (accuracy).',
    )
)


def _titanic(rng):
    n = 900
    sex = rng.integers(0, 2, n)
    pclass = rng.integers(1, 4, n)
    age = rng.uniform(1, 75, n)
    logit = 1.5 * sex - 0.6 * (pclass - 2) - 0.12 * (age - 35)
    y = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    df = pd.DataFrame(
        {
            'id': np.arange(n),
            'pclass': pclass,
            'sex': sex,
            'age': np.where(rng.random(n) < 0.3, np.nan, age.round(0)),
            'fare': (rng.lognormal(3, 0.8, n) / pclass).round(2),
            'ticket_number': rng.integers(100000, 999999, n),
            'survived': y,
        }
    )
    d = _split(df, 'survived', 600, 0, 'accuracy')
    # from the table: the age is U(1, 75) within the shown value's rounding step, anywhere in it if hidden
    te = d['files']['test.csv']
    a = te['age'].to_numpy()
    ages = _midpoints(
        np.where(np.isnan(a), 1, np.maximum(a - 0.5, 1)), np.where(np.isnan(a), 75, np.minimum(a + 0.5, 75))
    )
    p = expit((1.5 * te['sex'] - 0.6 * (te['pclass'] - 2)).to_numpy()[:, None] - 0.12 * (ages - 35)).mean(1)
    d['oracle'] = d['sample'].assign(survived=(p > 0.5).astype(int))
    return d


TITANIC = '''from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
FEATURES = ['pclass', 'sex', 'age', 'fare', 'ticket_number', 'age_missing']


def prepare(df):
    df = df.assign(age_missing=df['age'].isna().astype(float))
    df['age'] = df['age'].fillna(train['age'].median())
    return df[FEATURES].to_numpy(float)


Xtr, Xte = prepare(train), prepare(test)
scaler = StandardScaler().fit(Xtr)
Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
model = SVC(C=1.0, gamma='scale', random_state=args.seed).fit(Xtr, train['survived'])
pd.DataFrame({'id': test['id'], 'survived': model.predict(Xte)}).to_csv(args.out, index=False)
'''
register(
    Template(
        'tab-titanic',
        'tabular',
        'Titanic (procedural)',
        'binary survival',
        'accuracy',
        False,
        _titanic,
        STARTER_HEAD + TITANIC,
        {
            'unscaled features': [('Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)', 'Xtr, Xte = Xtr, Xte')],
            'missingness sentinel': [
                ("df['age'] = df['age'].fillna(train['age'].median())", "df['age'] = df['age'].fillna(-9999)")
            ],
            'excessive regularization': [('SVC(C=1.0,', 'SVC(C=0.001,')],
        },
        'Predict `survived` (1 or 0) for every passenger in `test.csv` (accuracy).',
    )
)
