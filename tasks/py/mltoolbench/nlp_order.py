"""NLP templates about the order of a sequence: ranking a notebook's shuffled cells (AI4Code) and predicting a
sentence's next token (BabyLM). The made-up vocabulary they draw from is in nlp.py."""

import numpy as np
import pandas as pd

from .core import STARTER_HEAD, Template, register
from .nlp import _frame, words


def _notebooks(rng):
    vocab = words(rng, 300)
    steps = [vocab[10 * k : 10 * k + 10] for k in range(8)]
    filler = vocab[80:]
    rows = []
    for nb in range(260):
        order = rng.permutation(8)
        for pos in range(8):
            toks = (
                list(rng.choice(filler, 6)) + [rng.choice(steps[pos]) for _ in range(2)] + list(rng.choice(filler, 4))
            )
            rows.append((f'{nb}_{order[pos]}', nb, ' '.join(toks), pos))
    df = (
        pd.DataFrame(rows, columns=['id', 'notebook', 'source', 'rank'])
        .sort_values('id', kind='stable')
        .reset_index(drop=True)
    )
    tr = df['notebook'] < 180
    test = df[~tr]
    return {
        'files': {
            'train.csv': df[tr].reset_index(drop=True),
            'test.csv': test.drop(columns='rank').reset_index(drop=True),
        },
        'answer': test[['id', 'notebook', 'rank']].reset_index(drop=True),
        'sample': test[['id']].assign(rank=0).reset_index(drop=True),
        # each cell holds two words of its position's own list, so the text fixes the order
        'oracle': test[['id', 'rank']].reset_index(drop=True),
        'grading': {'metric': 'kendall_tau', 'id': 'id', 'columns': ['rank'], 'group': 'notebook'},
    }


AI4CODE = '''from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
MAXWORDS = 64
cut = lambda s: s.str.split().str[:MAXWORDS].str.join(' ')
vec = TfidfVectorizer()
model = Ridge(alpha=1.0 + 0.1 * args.seed).fit(vec.fit_transform(cut(train['source'])), train['rank'])
pd.DataFrame({'id': test['id'], 'rank': model.predict(vec.transform(cut(test['source'])))}).to_csv(args.out, index=False)
'''
register(
    Template(
        'nlp-ai4code',
        'nlp',
        'Google AI4Code (procedural)',
        'order the cells of each notebook',
        'kendall_tau',
        False,
        _notebooks,
        STARTER_HEAD + AI4CODE,
        {'short context': [('MAXWORDS = 64', 'MAXWORDS = 5')]},
        'Each notebook has eight cells shuffled; predict a rank score per cell so that sorting by it gives the original order (mean Kendall tau per notebook).',
    )
)


def _babylm(rng):
    vocab = words(rng, 60)
    nxt = {w: rng.choice(vocab, 3) for w in vocab}
    starts = vocab[:8]
    sents = []
    for _ in range(700):
        w = rng.choice(starts)
        s = [w]
        for _ in range(rng.integers(3, 9)):
            w = rng.choice(nxt[w]) if rng.random() < 0.9 else rng.choice(vocab)
            s.append(w)
        sents.append(' '.join(s) + ' . ' + rng.choice(starts))
    ids = [f'q{i:05d}' for i in range(700)]
    tr = 500
    test_ctx = [' '.join(s.split()[:-1]) for s in sents[tr:]]
    target = [s.split()[-1] for s in sents[tr:]]
    cut = [rng.integers(1, len(c.split())) for c in test_ctx]
    ctx = [' '.join(c.split()[: k + 1]) for c, k in zip(test_ctx, cut)]
    tgt = [(c.split() + [t])[k + 1] for c, t, k in zip(test_ctx, target, cut)]
    return {
        'files': {'train.csv': _frame(ids[:tr], text=sents[:tr]), 'test.csv': _frame(ids[tr:], context=ctx)},
        'answer': _frame(ids[tr:], next=tgt),
        'sample': _frame(ids[tr:], next='.'),
        'oracle': _frame(ids[tr:], next=[_next_token(c, nxt, starts) for c in ctx]),
        'grading': {'metric': 'accuracy', 'id': 'id', 'columns': ['next']},
    }


def _next_token(ctx, nxt, starts):
    """The most probable next token of a _babylm context, under the chain and the sentence lengths that drew it."""
    toks = ctx.split()
    if toks[-1] == '.':
        return starts[0]  # the next sentence's first word: any of the starts alike
    # a sentence has L = 4..9 words alike and the context is any of its first 2..L + 1 tokens alike, so P(L | m words, no '.') ~ 1/L for L >= m
    m = len(toks)
    end = (1 / m if m >= 4 else 0) / sum(1 / L for L in range(max(m, 4), 10))
    words, counts = np.unique(nxt[toks[-1]], return_counts=True)
    best = int(counts.argmax())
    return '.' if end > (1 - end) * (0.9 * counts[best] / 3 + 0.1 / 60) else str(words[best])


BABYLM = '''from collections import Counter, defaultdict

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
PAD = '<pad>'
seqs = [t.split() for t in train['text']]
L = max(map(len, seqs))
batch = [s + [PAD] * (L - len(s)) for s in seqs]
counts = defaultdict(Counter)
for s in batch:
    for a, b in zip(s, s[1:]):
        if b != PAD:
            counts[a][b] += 1
pred = [counts[c.split()[-1]].most_common(1)[0][0] if counts[c.split()[-1]] else '.' for c in test['context']]
pd.DataFrame({'id': test['id'], 'next': pred}).to_csv(args.out, index=False)
'''
register(
    Template(
        'nlp-babylm',
        'nlp',
        'BabyLM (procedural)',
        'next-token prediction',
        'accuracy',
        False,
        _babylm,
        STARTER_HEAD + BABYLM,
        {'padding in loss': [('        if b != PAD:\n            counts[a][b] += 1', '        counts[a][b] += 1')]},
        'Sentences of a small language are in `train.csv`; for each test context, predict the next token (accuracy).',
    )
)
