"""Time-series templates: seasonal multichannel series, gappy series, breath sequences."""

import numpy as np
import pandas as pd

from .core import STARTER_HEAD, Template, register

LOOK, HOR = 48, 12
PHI = 0.8


def _series(rng, T, scales, period=24):
    """The series (T x channels) and its unscaled parts: the seasonal term, an AR(PHI) term and a random-walk level."""
    t = np.arange(T)
    parts = []
    for _ in scales:
        ph = rng.uniform(0, 2 * np.pi)
        x = np.sin(2 * np.pi * t / period + ph) + 0.5 * np.sin(4 * np.pi * t / period + 2 * ph)
        ar = np.zeros(T)
        e = rng.normal(0, 0.3, T)
        for i in range(1, T):
            ar[i] = PHI * ar[i - 1] + e[i]
        level = np.cumsum(rng.normal(0, 0.08, T))
        parts.append((x, ar, level))
    x, ar, level = (np.stack(p, 1) for p in zip(*parts))
    s = np.array(scales, float)
    return s * (x + ar + level) + 10 * s, (x, ar, level)


def _bridge(x, ar, level, seen, t):
    """The conditional mean (and median: it is Gaussian) of the unscaled series at t given its true parts at the nearest seen steps
    on either side: an AR(PHI) bridge and a random-walk bridge, or their forecast where nothing is seen after t."""
    a = t - np.flatnonzero(seen[:t])[-1]
    after = np.flatnonzero(seen[t:])
    if not len(after):
        return x[t] + PHI**a * ar[t - a] + level[t - a]
    b = after[0]
    u, v = ar[t - a], ar[t + b]
    m_ar = (PHI**a * (1 - PHI ** (2 * b)) * u + PHI**b * (1 - PHI ** (2 * a)) * v) / (1 - PHI ** (2 * (a + b)))
    return x[t] + m_ar + level[t - a] + a / (a + b) * (level[t + b] - level[t - a])


def _forecast(channels, scales, period=24, T=1400, windows=60):
    def make(rng):
        X, (x, ar, level) = _series(rng, T + windows * (LOOK + HOR), scales, period)
        train = pd.DataFrame(X[:T].round(5), columns=channels)
        train.insert(0, 'step', np.arange(T))
        rows, ans = [], []
        seen = np.arange(len(X)) < T
        for w in range(windows):
            s = T + w * (LOOK + HOR)
            rows += [(f'w{w}', k, *X[s + k]) for k in range(LOOK)]
            ans += [(f'w{w}_{h}', *X[s + LOOK + h]) for h in range(HOR)]
            seen[s : s + LOOK] = True
        # the next window starts right after each horizon, so the best guess is a bridge between the two, not a forecast
        mean = [
            [_bridge(x[:, j], ar[:, j], level[:, j], seen, t) * c + 10 * c for j, c in enumerate(scales)]
            for t in np.flatnonzero(~seen[T:]) + T
        ]
        test = pd.DataFrame(rows, columns=['window', 'step', *channels]).round(5)
        answer = pd.DataFrame(ans, columns=['id', *channels]).round(5)
        sample = answer[['id']].assign(**{c: float(train[c].mean()) for c in channels})
        oracle = answer[['id']].assign(**dict(zip(channels, np.array(mean).T)))
        return {
            'files': {'train.csv': train, 'test.csv': test},
            'answer': answer,
            'sample': sample,
            'oracle': oracle,
            'grading': {
                'metric': 'mse',
                'id': 'id',
                'columns': channels,
                'scale': [float(train[c].std()) for c in channels],
            },
        }

    return make


FORECAST = '''from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
CHANNELS = [c for c in train.columns if c != 'step']
LOOKBACK, HORIZON = 48, 12
sd = train[CHANNELS].std().to_numpy()
S = train[CHANNELS].to_numpy() / sd
level = lambda w: w.mean(0)
starts = np.arange(0, len(S) - LOOKBACK - HORIZON, 2)
Xw = np.stack([(S[i:i + LOOKBACK] - level(S[i:i + LOOKBACK]))[-LOOKBACK:].ravel() for i in starts])
Yw = np.stack([(S[i + LOOKBACK:i + LOOKBACK + HORIZON] - level(S[i:i + LOOKBACK])).ravel() for i in starts])
model = Ridge(alpha=1.0 + 0.1 * args.seed).fit(Xw, Yw)
rows = []
for w, g in test.groupby('window', sort=False):
    x = g[CHANNELS].to_numpy() / sd
    pred = (model.predict((x - level(x))[-LOOKBACK:].ravel()[None])[0].reshape(HORIZON, len(CHANNELS)) + level(x)) * sd
    for h in range(HORIZON):
        rows.append({'id': f'{w}_{h}', **{c: pred[h, j] for j, c in enumerate(CHANNELS)}})
pd.DataFrame(rows).to_csv(args.out, index=False)
'''
GLOBAL = [('level = lambda w: w.mean(0)\n', 'level = lambda w: S.mean(0)\n')]
PERMUTE = [
    ("{c: pred[h, j] for j, c in enumerate(CHANNELS)}", "{c: pred[h, j] for j, c in enumerate(sorted(CHANNELS))}")
]
register(
    Template(
        'ts-etth-forecast',
        'time_series',
        'ETTh1 (procedural)',
        'multichannel forecasting, 12 steps ahead',
        'mse',
        True,
        _forecast(['oil_temp', 'hufl', 'mufl', 'lull'], [3.0, 0.05, 20.0, 0.5]),
        STARTER_HEAD + FORECAST,
        {
            'global scaler': GLOBAL,
            'output channel permutation': PERMUTE,
            'unnecessarily short context': [
                ('level(S[i:i + LOOKBACK]))[-LOOKBACK:]', 'level(S[i:i + LOOKBACK]))[-1:]'),
                ('(x - level(x))[-LOOKBACK:]', '(x - level(x))[-1:]'),
            ],
        },
        '`train.csv` is an hourly multichannel series; each `window` of `test.csv` is 48 later steps. Forecast the next 12 steps of every channel (id `<window>_<h>`, h = 0..11; MSE in units of each channel\'s training standard deviation).',
    )
)
register(
    Template(
        'ts-weather',
        'time_series',
        'Weather (procedural)',
        'multichannel forecasting, 12 steps ahead',
        'mse',
        True,
        _forecast(['temperature', 'wind', 'pressure'], [8.0, 0.2, 40.0], period=24),
        STARTER_HEAD + FORECAST,
        {
            'global scaler': GLOBAL,
            'output channel permutation': PERMUTE,
            'excessive regularization': [('Ridge(alpha=1.0 + 0.1 * args.seed)', 'Ridge(alpha=1e6 + 0.1 * args.seed)')],
        },
        '`train.csv` is a multichannel weather series; each `window` of `test.csv` is 48 later steps. Forecast the next 12 steps of every channel (id `<window>_<h>`, h = 0..11; MSE in units of each channel\'s training standard deviation).',
    )
)
register(
    Template(
        'ts-ecl',
        'time_series',
        'ECL electricity (procedural)',
        'forecasting of client consumption',
        'mse',
        True,
        _forecast(['client_a', 'client_b', 'client_c', 'client_d'], [100.0, 0.3, 5.0, 40.0]),
        STARTER_HEAD + FORECAST,
        {'global scaler': GLOBAL},
        '`train.csv` holds the hourly consumption of four clients; each `window` of `test.csv` is 48 later steps. Forecast the next 12 steps (id `<window>_<h>`; MSE in units of each channel\'s training standard deviation).',
    )
)


def _impute(rng):
    chans, scales = ['load', 'temp'], [30.0, 0.4]
    X, (x, ar, level) = _series(rng, 3000, scales)
    train = pd.DataFrame(X[:2000].round(5), columns=chans)
    train.insert(0, 'step', np.arange(2000))
    test = pd.DataFrame(X[2000:].round(5), columns=chans)
    test.insert(0, 'step', np.arange(2000, 3000))
    hide = rng.random(test[chans].shape) < 0.15
    ans = [(f'{test.step[i]}_{c}', c, test[c][i]) for i in range(len(test)) for j, c in enumerate(chans) if hide[i, j]]
    test[chans] = test[chans].mask(hide)
    answer = pd.DataFrame(ans, columns=['id', 'channel', 'value'])
    seen = np.r_[np.ones((2000, len(chans)), bool), ~hide]
    return {
        'files': {'train.csv': train, 'test.csv': test},
        'answer': answer,
        'sample': answer[['id']].assign(value=0.0),
        'oracle': answer[['id']].assign(
            value=[
                _bridge(x[:, j], ar[:, j], level[:, j], seen[:, j], 2000 + i) * scales[j] + 10 * scales[j]
                for i, j in zip(*np.nonzero(hide))
            ]
        ),
        'grading': {
            'metric': 'mae',
            'id': 'id',
            'columns': ['value'],
            'row_scale': {c: float(train[c].std()) for c in chans},
            'row_scale_by': 'channel',
        },
    }


IMPUTE = '''from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
CHANNELS = [c for c in train.columns if c != 'step']
K = 3
mu, sd = train[CHANNELS].mean().to_numpy(), train[CHANNELS].std().to_numpy()
mu, sd = np.broadcast_to(mu, len(CHANNELS)), np.broadcast_to(sd, len(CHANNELS))


def windows(S, M):
    Xs, idx = [], []
    for j in range(S.shape[1]):
        pad = np.pad(S[:, j], K)
        pm = np.pad(M[:, j], K, constant_values=True)
        for t in range(len(S)):
            Xs.append(np.r_[pad[t:t + 2 * K + 1], pm[t:t + 2 * K + 1]])
            idx.append((t, j))
    return np.array(Xs), idx


R = train[CHANNELS].to_numpy()
S = (R - mu) / sd
M = rng.random(S.shape) < 0.15
X, idx = windows((np.where(M, 0.0, R) - mu) / sd, M)
X[:, K], X[:, 2 * K + 1 + K] = 0.0, 1.0
y = np.array([S[t, j] for t, j in idx])
model = Ridge(alpha=1.0 + 0.1 * args.seed).fit(X, y)
Mt = test[CHANNELS].isna().to_numpy()
Xt, idx_t = windows((test[CHANNELS].fillna(0.0).to_numpy() - mu) / sd, Mt)
pred = model.predict(Xt)
rows = [{'id': f"{test['step'][t]}_{CHANNELS[j]}", 'value': p * sd[j] + mu[j]} for p, (t, j) in zip(pred, idx_t) if Mt[t, j]]
pd.DataFrame(rows).to_csv(args.out, index=False)
'''
register(
    Template(
        'ts-etth-impute',
        'time_series',
        'ETTh1 imputation (procedural)',
        'fill the missing values of a series',
        'mae',
        True,
        _impute,
        STARTER_HEAD + IMPUTE,
        {
            'wrong loss region': [
                ('X[:, K], X[:, 2 * K + 1 + K] = 0.0, 1.0\n', 'X[:, K], X[:, 2 * K + 1 + K] = S.T.ravel(), 0.0\n')
            ],
            'missing mask input': [
                (
                    '            Xs.append(np.r_[pad[t:t + 2 * K + 1], pm[t:t + 2 * K + 1]])',
                    '            Xs.append(np.r_[pad[t:t + 2 * K + 1], 0 * pm[t:t + 2 * K + 1]])',
                )
            ],
            'global scaler': [
                (
                    'mu, sd = train[CHANNELS].mean().to_numpy(), train[CHANNELS].std().to_numpy()',
                    'mu, sd = train[CHANNELS].to_numpy().mean(), train[CHANNELS].to_numpy().std()',
                )
            ],
        },
        '`test.csv` is a later stretch of the series in `train.csv` with values missing; predict each missing value (id `<step>_<channel>`, column `value`; MAE in units of each channel\'s training standard deviation).',
    )
)


def _ventilator(rng):
    rows, steps, clean = [], 40, []
    for b in range(260):
        R, C = rng.choice([5, 20, 50]), rng.choice([10, 20, 50])
        u_in = np.clip(rng.normal(20, 8) + np.cumsum(rng.normal(0, 2, steps)), 0, 100)
        u_out = (np.arange(steps) >= 15).astype(int)
        vol = np.cumsum(u_in * (1 - u_out)) * 0.03
        p0 = np.where(u_out == 0, 5 + R * u_in / 100 + vol * 10 / C, 5 + 3 * np.exp(-0.3 * (np.arange(steps) - 15)))
        p = p0 + rng.normal(0, 0.1, steps)
        clean += list(p0)
        rows += [(f'{b}_{t}', b, t, R, C, round(u_in[t], 4), u_out[t], round(p[t], 4)) for t in range(steps)]
    df = pd.DataFrame(rows, columns=['id', 'breath_id', 'time_step', 'R', 'C', 'u_in', 'u_out', 'pressure'])
    tr = df['breath_id'] < 180
    test = df[~tr].reset_index(drop=True)
    answer = test[test['u_out'] == 0][['id', 'pressure']].reset_index(drop=True)
    # the median pressure is the noise-free one, which R, C, u_in and u_out fix
    oracle = answer[['id']].assign(pressure=np.array(clean)[(~tr & (df['u_out'] == 0)).to_numpy()])
    return {
        'files': {'train.csv': df[tr].reset_index(drop=True), 'test.csv': test.drop(columns='pressure')},
        'answer': answer,
        'sample': answer[['id']].assign(pressure=10.0),
        'oracle': oracle,
        'grading': {'metric': 'mae', 'id': 'id', 'columns': ['pressure']},
    }


VENT = '''from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')


def features(df):
    df = df.sort_values(['breath_id', 'time_step'])
    u = df['u_in'] * (1 - df['u_out'])
    cum = u.groupby(df['breath_id']).cumsum()
    return df, np.c_[df['u_in'], df['u_in'] * df['R'], cum, cum / df['C'], df['time_step'], df['u_out']]


tr, X = features(train)
rows = (tr['u_out'] == 0).to_numpy()
model = Ridge(alpha=1e-3 + 0.001 * args.seed).fit(X[rows], tr['pressure'][rows])
te, Xt = features(test)
keep = (te['u_out'] == 0).to_numpy()
pd.DataFrame({'id': te['id'][keep], 'pressure': model.predict(Xt)[keep]}).to_csv(args.out, index=False)
'''
register(
    Template(
        'ts-ventilator',
        'time_series',
        'Ventilator Pressure (procedural)',
        'airway pressure during inspiration',
        'mae',
        True,
        _ventilator,
        STARTER_HEAD + VENT,
        {
            'wrong loss region': [("rows = (tr['u_out'] == 0).to_numpy()", "rows = np.ones(len(tr), bool)")],
            'time order reversal': [
                (
                    "df = df.sort_values(['breath_id', 'time_step'])",
                    "df = df.sort_values(['breath_id', 'time_step'], ascending=[True, False])",
                )
            ],
            'missing group resets': [("cum = u.groupby(df['breath_id']).cumsum()", "cum = u.cumsum()")],
        },
        'Each breath is 40 steps of the control inputs `u_in`, `u_out` with lung attributes `R`, `C`; predict `pressure` at the test steps where `u_out` is 0 (MAE).',
    )
)


def _crypto(rng):
    assets, T = 4, 1500
    w = [1.0, 2.0, 0.5, 1.5]
    f = rng.normal(0, 1, T)
    rows = []
    prev = np.zeros(assets)
    for t in range(T):
        r = 0.3 * prev[[1, 2, 3, 0]] + 0.2 * f[t] + rng.normal(0, 1, assets)
        rows += [
            (
                f'{t}_{a}',
                t,
                a,
                round(prev[a], 5),
                round(prev[(a + 1) % assets], 5),
                round(f[t - 1] if t else 0.0, 5),
                w[a],
                round(r[a], 5),
            )
            for a in range(assets)
        ]
        prev = r
    df = pd.DataFrame(
        rows, columns=['id', 'timestamp', 'asset', 'ret_lag1', 'ret_next_asset_lag1', 'market_lag1', 'weight', 'target']
    )
    tr = df['timestamp'] < 1000
    test = df[~tr].reset_index(drop=True)
    return {
        'files': {'train.csv': df[tr].reset_index(drop=True), 'test.csv': test.drop(columns='target')},
        'answer': test[['id', 'weight', 'target']],
        'sample': test[['id']].assign(target=0.0),
        # the mean next return given the past: 0.3 times the next asset's last return (the step's market move is noise to a forecaster)
        'oracle': test[['id']].assign(target=0.3 * test['ret_next_asset_lag1']),
        'grading': {'metric': 'weighted_corr', 'id': 'id', 'columns': ['target'], 'weight': 'weight'},
    }


CRYPTO = '''from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
F = ['ret_lag1', 'market_lag1']
model = Ridge(alpha=1.0 + args.seed).fit(train[F], train['target'], sample_weight=train['weight'])
pd.DataFrame({'id': test['id'], 'target': model.predict(test[F])}).to_csv(args.out, index=False)
'''
register(
    Template(
        'ts-crypto',
        'time_series',
        'G-Research Crypto (procedural)',
        'next-step returns, weighted correlation',
        'weighted_corr',
        False,
        _crypto,
        STARTER_HEAD + CRYPTO,
        {},
        'Predict each asset\'s next return (`target`) at every test timestamp; the score is the correlation with the truth weighted by `weight`.',
    )
)
