"""NLP templates: short texts over a made-up vocabulary with a hidden label rule."""

import numpy as np
import pandas as pd
from scipy.special import ndtr

from .core import STARTER_HEAD, Template, register

SYL = ['ka', 'lo', 'mi', 'ten', 'ra', 'vu', 'sel', 'do', 'pri', 'na', 'gor', 'fe', 'shi', 'tam', 'bel', 'qui']


def words(rng, n, length=(2, 3)):
    out = set()
    while len(out) < n:
        out.add(''.join(rng.choice(SYL, rng.integers(*length, endpoint=True))))
    return sorted(out)


def _frame(ids, **cols):
    return pd.DataFrame({'id': ids, **cols})


def _imdb(rng):
    vocab = words(rng, 420)
    filler, pos, neg = vocab[:360], vocab[360:390], vocab[390:420]
    n = 1000
    y = (rng.random(n) < 0.5).astype(int)
    texts = []
    for i in range(n):
        body = list(rng.choice(filler, rng.integers(25, 70)))
        for _ in range(rng.integers(2, 6)):
            cue = pos if (y[i] == 1) == (rng.random() < 0.8) else neg
            body.insert(rng.integers(1, len(body)), rng.choice(cue))
        texts.append(' '.join(list(rng.choice(filler, 14)) + body))
    ids = [f'r{i:05d}' for i in range(n)]
    tr = 700
    # each cue agrees with the label 4 times out of 5, so the label that more cues agree with is the more probable (1 on a tie)
    lean = [sum((w in pos) - (w in neg) for w in t.split()) for t in texts[tr:]]
    return {
        'files': {
            'train.csv': _frame(ids[:tr], text=texts[:tr], label=y[:tr]),
            'test.csv': _frame(ids[tr:], text=texts[tr:]),
        },
        'answer': _frame(ids[tr:], label=y[tr:]),
        'sample': _frame(ids[tr:], label=1),
        'oracle': _frame(ids[tr:], label=(np.array(lean) >= 0).astype(int)),
        'grading': {'metric': 'accuracy', 'id': 'id', 'columns': ['label']},
    }


IMDB = '''from sklearn.linear_model import LogisticRegression

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
ytr = train['label'].to_numpy()
keep = rng.random(len(ytr)) < 0.9
train, ytr = train[keep], ytr[keep]
vocab = {w: i + 1 for i, w in enumerate(sorted({w for t in train['text'] for w in t.split()}))}
MAXLEN = 128
EMB = np.vstack([np.full(len(vocab), 0.5), np.eye(len(vocab))])


def encode(texts):
    ids = np.zeros((len(texts), MAXLEN), int)
    for r, t in enumerate(texts):
        toks = [vocab[w] for w in t.split() if w in vocab][:MAXLEN]
        ids[r, :len(toks)] = toks
    return ids


def pool(ids):
    mask = (ids > 0)[..., None]
    return (EMB[ids] * mask).sum(1) / np.maximum(mask.sum(1), 1)


model = LogisticRegression(C=20.0, max_iter=500, random_state=args.seed)
model.fit(pool(encode(train['text'])), ytr)
pred = model.predict(pool(encode(test['text'])))
pd.DataFrame({'id': test['id'], 'label': pred}).to_csv(args.out, index=False)
'''
register(
    Template(
        'nlp-imdb',
        'nlp',
        'IMDB reviews (procedural)',
        'binary sentiment of reviews',
        'accuracy',
        False,
        _imdb,
        STARTER_HEAD + IMDB,
        {
            'short context': [('MAXLEN = 128', 'MAXLEN = 12')],
            'unmasked pooling': [
                ('    return (EMB[ids] * mask).sum(1) / np.maximum(mask.sum(1), 1)', '    return EMB[ids].mean(1)')
            ],
            'class imbalance': [
                ('keep = rng.random(len(ytr)) < 0.9', 'keep = rng.random(len(ytr)) < np.where(ytr == 0, 0.1, 0.9)')
            ],
        },
        'Each review in `train.csv` is labelled 1 (positive) or 0 (negative); predict the label of every review in `test.csv`.',
    )
)


def _authors(rng):
    vocab = words(rng, 600)
    shared, own = vocab[:300], [vocab[300 + 100 * a : 400 + 100 * a] for a in range(3)]
    names = ['EAP', 'HPL', 'MWS']
    n = 900
    y = rng.integers(0, 3, n)
    texts = []
    for i in range(n):
        toks = [
            rng.choice(own[y[i]])
            if rng.random() < 0.12
            else rng.choice(own[rng.integers(3)])
            if rng.random() < 0.1
            else rng.choice(shared)
            for _ in range(rng.integers(12, 30))
        ]
        texts.append(' '.join(toks))
    ids = [f's{i:05d}' for i in range(n)]
    tr = 600
    lab = [names[v] for v in y]
    ans = _frame(ids[tr:], author=lab[tr:])
    # a word of author a's own list is drawn 0.12 + 0.88 * 0.1 / 3 of the time under a, 0.88 * 0.1 / 3 under another;
    # shared words and the length say nothing, so the posterior follows from each author's count of own words
    owner = {w: a for a in range(3) for w in own[a]}
    counts = np.array([np.bincount([owner[w] for w in t.split() if w in owner], minlength=3) for t in texts[tr:]])
    logit = counts * np.log((0.12 + 0.088 / 3) / (0.088 / 3))
    post = np.exp(logit - logit.max(1, keepdims=True))
    post /= post.sum(1, keepdims=True)
    return {
        'files': {
            'train.csv': _frame(ids[:tr], text=texts[:tr], author=lab[:tr]),
            'test.csv': _frame(ids[tr:], text=texts[tr:]),
        },
        'answer': ans,
        'sample': _frame(ids[tr:], EAP=1 / 3, HPL=1 / 3, MWS=1 / 3),
        'oracle': _frame(ids[tr:], **dict(zip(names, post.T))),
        'grading': {'metric': 'logloss', 'id': 'id', 'columns': ['author'], 'classes': names},
    }


SPOOKY = '''from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
MAXWORDS = 40
cut = lambda s: s.str.split().str[:MAXWORDS].str.join(' ')
vec = CountVectorizer(max_features=5000)
Xtr = vec.fit_transform(cut(train['text']))
model = MultinomialNB(alpha=1.0 + 0.05 * args.seed).fit(Xtr, train['author'])
logp = model.predict_log_proba(vec.transform(cut(test['text'])))
TEMPERATURE = 1.0
P = np.exp((logp - logp.max(1, keepdims=True)) / TEMPERATURE)
P /= P.sum(1, keepdims=True)
sub = pd.DataFrame(P, columns=model.classes_)
sub.insert(0, 'id', test['id'])
sub.to_csv(args.out, index=False)
'''
register(
    Template(
        'nlp-spooky',
        'nlp',
        'Spooky Author Identification (procedural)',
        'three-way authorship with probabilities',
        'logloss',
        True,
        _authors,
        STARTER_HEAD + SPOOKY,
        {
            'vocabulary bottleneck': [('max_features=5000', 'max_features=40')],
            'short context': [('MAXWORDS = 40', 'MAXWORDS = 3')],
            'overconfident probabilities': [('TEMPERATURE = 1.0', 'TEMPERATURE = 0.15')],
        },
        'Each sentence was written by one of three authors (EAP, HPL, MWS); submit a probability for each author per test sentence.',
    )
)


def _essays(rng):
    vocab = words(rng, 500)
    filler, good, bad = vocab[:400], vocab[400:450], vocab[450:]
    n = 900
    texts, score = [], []
    for _ in range(n):
        q = rng.uniform(0, 1)
        toks = [
            rng.choice(good)
            if rng.random() < 0.12 * q
            else rng.choice(bad)
            if rng.random() < 0.12 * (1 - q)
            else rng.choice(filler)
            for _ in range(rng.integers(40, 90))
        ]
        texts.append(' '.join(toks))
        score.append(round(float(np.clip(1 + 4 * q + rng.normal(0, 0.3), 1, 5)) * 2) / 2)
    ids = [f'e{i:05d}' for i in range(n)]
    tr = 600
    # the mean score given the quality q: 1 + 4q + N(0, 0.3), clipped to [1, 5], rounded to a half step
    qs = (np.arange(2000) + 0.5) / 2000
    steps = np.arange(1, 5.5, 0.5)
    cdf = ndtr((np.r_[steps[:-1] + 0.25, np.inf] - (1 + 4 * qs)[:, None]) / 0.3)
    mean = np.diff(np.c_[np.zeros(len(qs)), cdf], axis=1) @ steps
    # averaged over q's posterior on a grid (prior U(0, 1)): a word is good with probability 0.12q, else bad with 0.12(1 - q),
    # each list's words alike, so a text tells q through its counts of good, bad and other words
    kind = {**dict.fromkeys(good, 0), **dict.fromkeys(bad, 1)}
    n_gb = np.array([np.bincount([kind.get(w, 2) for w in t.split()], minlength=3) for t in texts[tr:]])
    pg, pb = 0.12 * qs, (1 - 0.12 * qs) * 0.12 * (1 - qs)
    ll = n_gb @ np.log([pg, pb, 1 - pg - pb])
    post = np.exp(ll - ll.max(1, keepdims=True))
    return {
        'files': {
            'train.csv': _frame(ids[:tr], text=texts[:tr], score=score[:tr]),
            'test.csv': _frame(ids[tr:], text=texts[tr:]),
        },
        'answer': _frame(ids[tr:], score=score[tr:]),
        'sample': _frame(ids[tr:], score=3.0),
        'oracle': _frame(ids[tr:], score=post @ mean / post.sum(1)),
        'grading': {'metric': 'rmse', 'id': 'id', 'columns': ['score']},
    }


FEEDBACK = '''from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
MAXWORDS = 200
cut = lambda s: s.str.split().str[:MAXWORDS].str.join(' ')
vec = TfidfVectorizer(sublinear_tf=True)
Xtr, Xte = vec.fit_transform(cut(train['text'])), vec.transform(cut(test['text']))
y = train['score'].to_numpy(float)
mu, sd = y.mean(), y.std()
model = Ridge(alpha=1.0, random_state=args.seed).fit(Xtr, (y - mu) / sd)
pred = model.predict(Xte)
pred = pred * sd + mu
pd.DataFrame({'id': test['id'], 'score': np.clip(pred, 1, 5)}).to_csv(args.out, index=False)
'''
register(
    Template(
        'nlp-feedback',
        'nlp',
        'Feedback Prize ELL (procedural)',
        'essay proficiency score regression (1-5)',
        'rmse',
        True,
        _essays,
        STARTER_HEAD + FEEDBACK,
        {
            'short context': [('MAXWORDS = 200', 'MAXWORDS = 6')],
            'missing target inverse': [('pred = pred * sd + mu\n', 'pred = pred\n')],
            'excessive regularization': [('Ridge(alpha=1.0,', 'Ridge(alpha=3000.0,')],
        },
        'Each essay has a proficiency score from 1 to 5 in half steps; predict the score of every test essay (RMSE).',
    )
)


def _textnorm(rng):
    vocab = words(rng, 200, (1, 3))
    units, months = ['kg', 'km', 'ml'], ['jan', 'feb', 'mar', 'apr']
    rows = []
    for s in range(420):
        toks = []
        for _ in range(rng.integers(6, 14)):
            r = rng.random()
            if r < 0.6:
                w = rng.choice(vocab)
                toks.append((w, 'PLAIN'))
            elif r < 0.72:
                toks.append((rng.choice(vocab[:60]).upper(), 'LETTERS'))
            elif r < 0.82:
                toks.append((rng.choice(['.', ',', ';']), 'PUNCT'))
            elif r < 0.87:
                toks.append((str(rng.integers(2, 99)), 'CARDINAL'))
            elif r < 0.94:
                toks += [(rng.choice(months), 'PLAIN'), (str(rng.integers(2, 29)), 'DATE')]
            else:
                toks += [(str(rng.integers(2, 99)), 'MEASURE'), (rng.choice(units), 'PLAIN')]
        rows += [(f'{s}_{t}', s, tok, c) for t, (tok, c) in enumerate(toks)]
    df = pd.DataFrame(rows, columns=['id', 'sentence_id', 'before', 'class'])
    tr = df['sentence_id'] < 300
    test = df[~tr]
    return {
        'files': {
            'train.csv': df[tr].reset_index(drop=True),
            'test.csv': test[['id', 'sentence_id', 'before']].reset_index(drop=True),
        },
        'answer': test[['id', 'class']].reset_index(drop=True),
        'sample': test[['id']].assign(**{'class': 'PLAIN'}).reset_index(drop=True),
        # the class follows from the token and its neighbours (a number after a month is a DATE, before a unit a MEASURE)
        'oracle': test[['id', 'class']].reset_index(drop=True),
        'grading': {'metric': 'macro_f1', 'id': 'id', 'columns': ['class']},
    }


TEXTNORM = '''from sklearn.feature_extraction import FeatureHasher
from sklearn.linear_model import LogisticRegression

train = pd.read_csv(f'{D}/train.csv', keep_default_na=False)
test = pd.read_csv(f'{D}/test.csv', keep_default_na=False)
keep = rng.random(len(train)) < 0.9
train = train[keep].reset_index(drop=True)
CONTEXT = 1


def token_features(tok):
    tok = str(tok)
    shape = ''.join('X' if ch.isupper() else 'x' if ch.isalpha() else 'd' if ch.isdigit() else ch for ch in tok)
    return [f'w={tok}', f'shape={shape}', f'len={min(len(tok), 6)}'] + [f'c3={tok[i:i + 3]}' for i in range(max(len(tok) - 2, 1))]


def features(df):
    out = []
    for _, g in df.groupby('sentence_id', sort=False):
        toks = list(g['before'])
        for i, tok in enumerate(toks):
            f = token_features(tok)
            for k in range(1, CONTEXT + 1):
                f += [f'-{k}:{x}' for x in token_features(toks[i - k] if i >= k else '<s>')]
                f += [f'+{k}:{x}' for x in token_features(toks[i + k] if i + k < len(toks) else '</s>')]
            out.append(f)
    return FeatureHasher(n_features=2 ** 14, input_type='string').transform(out)


model = LogisticRegression(C=5.0, max_iter=1000, random_state=args.seed).fit(features(train), train['class'])
pd.DataFrame({'id': test['id'], 'class': model.predict(features(test))}).to_csv(args.out, index=False)
'''
register(
    Template(
        'nlp-textnorm',
        'nlp',
        'Text Normalization (procedural)',
        'semiotic class of every token',
        'macro_f1',
        False,
        _textnorm,
        STARTER_HEAD + TEXTNORM,
        {
            'case collapse': [('    tok = str(tok)\n', '    tok = str(tok).lower()\n')],
            'lost sentence context': [('CONTEXT = 1\n', 'CONTEXT = 0\n')],
            'rare type undersampling': [
                (
                    'keep = rng.random(len(train)) < 0.9',
                    "keep = rng.random(len(train)) < np.where(train['class'].isin(['DATE', 'MEASURE']), 0.03, 0.9)",
                )
            ],
        },
        'Each token of a sentence belongs to a semiotic class (PLAIN, PUNCT, LETTERS, CARDINAL, DATE, MEASURE); predict the class of every test token (macro F1).',
    )
)
