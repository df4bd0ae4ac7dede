"""Vision templates: small images drawn with numpy (16x16), PNG files on disk."""

import numpy as np
import pandas as pd
from scipy.special import log_ndtr, logsumexp

from .core import STARTER_HEAD, Template, register

SIZE = 16


def _protos(rng, k, ch, freq=3):
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    out = np.zeros((k, SIZE, SIZE, ch))
    for i in range(k):
        for c in range(ch):
            for _ in range(3):
                fx, fy = rng.integers(0, freq, 2)
                px, py = rng.uniform(0, 2 * np.pi, 2)
                out[i, :, :, c] += np.cos(2 * np.pi * fx * xx + px) * np.cos(2 * np.pi * fy * yy + py)
    return out / 3


def _draw(rng, protos, y, noise):
    X = protos[y] + noise * rng.normal(size=(len(y),) + protos.shape[1:])
    gain, shift = rng.uniform(0.8, 1.2, (len(y), 1, 1, 1)), rng.normal(0, 0.1, (len(y), 1, 1, 1))
    X = X * gain + shift
    X = np.clip(128 + 60 * X, 0, 255).astype(np.uint8)
    return (X[..., 0] if X.shape[-1] == 1 else X), gain.ravel(), shift.ravel()


def _loglik(X, protos, noise, gain, shift):
    """log P(image | class) for each class, given each image's true gain and shift: a pixel is 128 + 60 * (gain * (proto + noise * z) + shift),
    clipped to [0, 255] and truncated to an integer (a level of width 1, or a censored tail at either end)."""
    x = X.reshape(len(X), 1, -1).astype(float)
    mu = 128 + 60 * (gain[:, None, None] * protos.reshape(1, len(protos), -1) + shift[:, None, None])
    s = 60 * noise * gain[:, None, None]
    inner = -0.5 * ((x + 0.5 - mu) / s) ** 2
    return np.where(x == 0, log_ndtr((1 - mu) / s), np.where(x == 255, log_ndtr((mu - 255) / s), inner)).sum(2)


def _classification(rng, k, ch, n, noise, weights=None):
    protos = _protos(rng, k, ch)
    y = rng.choice(k, size=n, p=weights)
    X, gain, shift = _draw(rng, protos, y, noise)
    return X, y, protos, gain, shift


def _frames(X, y, n_train, names=None):
    ids = [f'img{i:05d}' for i in range(len(y))]
    lab = [names[v] for v in y] if names else y
    files = {f'images/{ids[i]}.png': X[i] for i in range(len(y))}
    files['train.csv'] = pd.DataFrame({'id': ids[:n_train], 'label': lab[:n_train]})
    files['test.csv'] = pd.DataFrame({'id': ids[n_train:]})
    answer = pd.DataFrame({'id': ids[n_train:], 'label': lab[n_train:]})
    return files, answer


def _cls_data(k, ch, n_train, n_test, noise, metric='accuracy', weights=None, proba=False):
    def make(rng):
        X, y, protos, gain, shift = _classification(rng, k, ch, n_train + n_test, noise, weights)
        files, answer = _frames(X, y, n_train)
        fill = 0.5 if proba else int(np.bincount(y[:n_train]).argmax())
        sample = pd.DataFrame({'id': answer['id'], 'label': fill})
        t = slice(n_train, None)
        post = _loglik(X[t], protos, noise, gain[t], shift[t]) + np.log(weights if weights is not None else np.ones(k))
        post = np.exp(post - post.max(1, keepdims=True))
        post /= post.sum(1, keepdims=True)
        oracle = sample.assign(label=post[:, 1] if proba else post.argmax(1))
        return {
            'files': files,
            'answer': answer,
            'sample': sample,
            'oracle': oracle,
            'grading': {'metric': metric, 'id': 'id', 'columns': ['label']},
        }

    return make


LOAD = '''from PIL import Image

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')


def load(ids):
    return np.stack([np.asarray(Image.open(f'{D}/images/{i}.png'), dtype=np.float32) for i in ids])


Xtr, Xte = load(train['id']), load(test['id'])
ytr = train['label'].to_numpy()
'''

CROP = '''MARGIN = 1


def crop(X):
    return X[:, MARGIN:X.shape[1] - MARGIN, MARGIN:X.shape[2] - MARGIN]


Xtr, Xte = crop(Xtr), crop(Xte)
'''

MLP_FIT = '''from sklearn.neural_network import MLPClassifier

model = MLPClassifier(hidden_layer_sizes=(64,), max_iter=60, random_state=args.seed)
model.fit(Xtr.reshape(len(Xtr), -1), ytr)
pred = model.predict(Xte.reshape(len(Xte), -1))
pd.DataFrame({'id': test['id'], 'label': pred}).to_csv(args.out, index=False)
'''

SUBSAMPLE = '''keep = rng.random(len(ytr)) < 0.9
Xtr, ytr = Xtr[keep], ytr[keep]
'''
RARE = ('keep = rng.random(len(ytr)) < 0.9', 'keep = rng.random(len(ytr)) < np.where(ytr < 3, 0.08, 0.9)')

register(
    Template(
        'cv-cifar10',
        'vision',
        'CIFAR-10 (procedural)',
        'ten-class colour image classification',
        'accuracy',
        False,
        _cls_data(10, 3, 700, 300, 2.2),
        STARTER_HEAD + LOAD + 'Xtr, Xte = Xtr / 255.0, Xte / 255.0\n' + CROP + SUBSAMPLE + MLP_FIT,
        {
            'input scale': [('Xtr, Xte = Xtr / 255.0, Xte / 255.0', 'Xtr, Xte = Xtr - 128.0, Xte - 128.0')],
            'rare class sampling': [RARE],
            'overaggressive crop': [('MARGIN = 1', 'MARGIN = 6')],
        },
        'Each 16x16 RGB image in `images/` belongs to one of ten classes; `train.csv` gives the labels, predict them for `test.csv`.',
    )
)

NORM = '''Xtr, Xte = Xtr / 255.0, Xte / 255.0
MEAN, STD = Xtr.mean(axis=(0, 1, 2)), Xtr.std(axis=(0, 1, 2))
Xtr, Xte = (Xtr - MEAN) / STD, (Xte - MEAN) / STD
'''
ERASE = '''ERASE = 0.2


def erase(X):
    X = X.copy()
    s = int(round(ERASE * X.shape[1]))
    for i in range(len(X)):
        if s:
            r, c = rng.integers(0, X.shape[1] - s + 1, 2)
            X[i, r:r + s, c:c + s] = 0.0
    return X


Xtr = erase(Xtr)
'''
register(
    Template(
        'cv-cifar100',
        'vision',
        'CIFAR-100 (procedural, coarse labels)',
        'twenty-class colour image classification',
        'accuracy',
        False,
        _cls_data(20, 3, 900, 300, 1.6),
        STARTER_HEAD + LOAD + NORM + SUBSAMPLE + ERASE + MLP_FIT,
        {
            'normalization scale': [
                (
                    'MEAN, STD = Xtr.mean(axis=(0, 1, 2)), Xtr.std(axis=(0, 1, 2))',
                    'MEAN, STD = np.array([125.3, 123.0, 113.9]), np.array([63.0, 62.1, 66.7])',
                )
            ],
            'rare class sampling': [(RARE[0], 'keep = rng.random(len(ytr)) < np.where(ytr < 10, 0.04, 0.9)')],
            'overaggressive erasing': [('ERASE = 0.2\n', 'ERASE = 0.9\n')],
        },
        'Each 16x16 RGB image belongs to one of twenty classes; predict the class of every test image.',
    )
)

FASHION = '''Xtr, Xte = Xtr / 255.0, Xte / 255.0
CONTRAST = 1.0
SHEAR = 0.1


def stretch(X):
    return np.clip(0.5 + (X - 0.5) * CONTRAST, 0.0, 1.0)


def shear(X):
    out = np.empty_like(X)
    for r in range(X.shape[1]):
        out[:, r] = np.roll(X[:, r], int(round(SHEAR * (r - X.shape[1] / 2))), axis=1)
    return out


Xtr, Xte = stretch(Xtr), stretch(Xte)
Xtr = shear(Xtr)
from sklearn.linear_model import LogisticRegression

model = LogisticRegression(C=1.0, max_iter=300)
model.fit(Xtr.reshape(len(Xtr), -1), ytr)
pred = model.predict(Xte.reshape(len(Xte), -1))
pd.DataFrame({'id': test['id'], 'label': pred}).to_csv(args.out, index=False)
'''
register(
    Template(
        'cv-fashion',
        'vision',
        'Fashion-MNIST (procedural)',
        'ten-class greyscale garment classification',
        'accuracy',
        False,
        _cls_data(10, 1, 700, 300, 1.4),
        STARTER_HEAD + LOAD + FASHION,
        {
            'contrast scale': [('CONTRAST = 1.0\n', 'CONTRAST = 12.0\n')],
            'excessive shear': [('SHEAR = 0.1\n', 'SHEAR = 1.5\n')],
            'excessive regularization': [('C=1.0,', 'C=0.0002,')],
        },
        'Each 16x16 greyscale image shows one of ten garment types; predict the type of every test image.',
    )
)


def _tgs(rng):
    n_train, n_test = 300, 150
    n = n_train + n_test
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    X = np.zeros((n, SIZE, SIZE))
    M = np.zeros((n, SIZE, SIZE), bool)
    for i in range(n):
        base = rng.normal(0, 1, (4, 4)).repeat(4, 0).repeat(4, 1) * 8
        img = 100 + base + rng.normal(0, 14, (SIZE, SIZE))
        if rng.random() < 0.8:
            cy, cx = rng.uniform(2, 14, 2)
            ry, rx = rng.uniform(2, 6, 2)
            m = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1
            img[m] += 32
            M[i] = m
        X[i] = img
    X = np.clip(X, 0, 255).astype(np.uint8)
    ids = [f'img{i:05d}' for i in range(n)]
    enc = [' '.join(str(j) for j in np.flatnonzero(M[i].ravel())) for i in range(n)]
    files = {f'images/{ids[i]}.png': X[i] for i in range(n)}
    for i in range(n_train):
        files[f'masks/{ids[i]}.png'] = (M[i] * 255).astype(np.uint8)
    files['train.csv'] = pd.DataFrame({'id': ids[:n_train]})
    files['test.csv'] = pd.DataFrame({'id': ids[n_train:]})
    answer = pd.DataFrame({'id': ids[n_train:], 'mask': enc[n_train:]})
    # the true mask: the drawn ellipse itself
    return {
        'files': files,
        'answer': answer,
        'sample': pd.DataFrame({'id': ids[n_train:], 'mask': ''}),
        'oracle': answer.copy(),
        'grading': {'metric': 'mean_iou', 'id': 'id', 'columns': ['mask'], 'mask_size': SIZE * SIZE},
    }


TGS = '''from PIL import Image
from scipy.ndimage import uniform_filter
from sklearn.linear_model import LogisticRegression

train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')


def load(folder, ids):
    return np.stack([np.asarray(Image.open(f'{D}/{folder}/{i}.png'), dtype=np.float32) / 255.0 for i in ids])


def features(X):
    return np.stack([X, uniform_filter(X, (1, 3, 3)), uniform_filter(X, (1, 5, 5))], -1).reshape(-1, 3)


Xtr, Xte = load('images', train['id']), load('images', test['id'])
M = load('masks', train['id'])
M = M > 0.5
model = LogisticRegression(class_weight={0: 1.0, 1: 1.0}, max_iter=300, C=1.0 + 0.01 * args.seed)
rows = rng.random(M.size) < 0.5
model.fit(features(Xtr)[rows], M.ravel()[rows])
THRESHOLD = 0.5
P = model.predict_proba(features(Xte))[:, 1].reshape(Xte.shape)
masks = [' '.join(str(j) for j in np.flatnonzero(p.ravel() > THRESHOLD)) for p in P]
pd.DataFrame({'id': test['id'], 'mask': masks}).to_csv(args.out, index=False)
'''
register(
    Template(
        'cv-tgs',
        'vision',
        'TGS Salt (procedural)',
        'binary segmentation of salt regions',
        'mean_iou',
        False,
        _tgs,
        STARTER_HEAD + TGS,
        {
            'soft mask resize': [('M = M > 0.5', 'M = uniform_filter(M, (1, 4, 4)) > 0.05')],
            'wrong positive weight': [('class_weight={0: 1.0, 1: 1.0}', 'class_weight={0: 1.0, 1: 0.05}')],
            'overconservative threshold': [('THRESHOLD = 0.5', 'THRESHOLD = 0.97')],
        },
        'Each 16x16 greyscale image may contain a salt body; `masks/` holds the training masks. Submit, per test image, the indices (row-major, 0-255) of the salt pixels separated by spaces, empty when there is none.',
    )
)


def _aptos(rng):
    n_train, n_test = 600, 250
    n = n_train + n_test
    y = rng.choice(5, size=n, p=[0.35, 0.25, 0.2, 0.12, 0.08])
    X = 110 + rng.normal(0, 10, (n, SIZE, SIZE))
    for i in range(n):
        for _ in range(int(y[i] * 3 + rng.integers(0, 2))):
            # lesions sit anywhere, often near the rim of the field
            r, c = rng.integers(0, SIZE, 2)
            X[i, r, c] += 90
    files, answer = _frames(np.clip(X, 0, 255).astype(np.uint8), y, n_train)
    # the grade is the lesion count (3 per grade, plus 0 or 1) over 3, rounded down, and the image shows every lesion (a bright pixel, 255 where two fall together)
    return {
        'files': files,
        'answer': answer,
        'sample': pd.DataFrame({'id': answer['id'], 'label': 0}),
        'oracle': answer.copy(),
        'grading': {'metric': 'qwk', 'id': 'id', 'columns': ['label']},
    }


APTOS = (
    '''Xtr, Xte = Xtr / 255.0, Xte / 255.0
'''
    + CROP
    + '''from sklearn.linear_model import Ridge


def features(X):
    bright = (X > 0.6).reshape(len(X), -1)
    return np.c_[bright.sum(1), X.reshape(len(X), -1).mean(1)]


model = Ridge(alpha=1.0 + 0.1 * args.seed).fit(features(Xtr), ytr)
pred = np.clip(np.round(model.predict(features(Xte))), 0, 4).astype(int)
pd.DataFrame({'id': test['id'], 'label': pred}).to_csv(args.out, index=False)
'''
)
register(
    Template(
        'cv-aptos',
        'vision',
        'APTOS 2019 (procedural)',
        'ordinal grading of retina images (0-4)',
        'qwk',
        False,
        _aptos,
        STARTER_HEAD + LOAD + APTOS,
        {'overaggressive crop': [('MARGIN = 1', 'MARGIN = 5')]},
        'Each 16x16 greyscale fundus image has a severity grade from 0 to 4; predict the grade (quadratic weighted kappa).',
    )
)


def _rsna(rng):
    n_train, n_test = 600, 300
    n = n_train + n_test
    y = (rng.random(n) < 0.15).astype(int)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    X = 90 + rng.normal(0, 12, (n, SIZE, SIZE))
    for i in np.flatnonzero(y):
        cy, cx = rng.uniform(3, 13, 2)
        X[i] += 13 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / 6)
    X = np.clip(X, 0, 255).astype(np.uint8)
    files, answer = _frames(X, y, n_train)
    # P(positive | image): the blob's likelihood ratio averaged over its centre (a 0.25-pixel grid), prior 0.15
    c = np.arange(3.125, 13, 0.25)
    gy, gx = (g.ravel()[:, None, None] for g in np.meshgrid(c, c))
    blobs = (13 * np.exp(-((yy - gy) ** 2 + (xx - gx) ** 2) / 6)).reshape(len(c) ** 2, -1)
    x = X[n_train:].reshape(n_test, -1) + 0.5 - 90
    lr = logsumexp((x @ blobs.T - 0.5 * (blobs**2).sum(1)) / 12**2, axis=1) - np.log(len(blobs))
    post = 1 / (1 + np.exp(-(lr + np.log(0.15 / 0.85))))
    # probabilistic F1 is linear-fractional in what is submitted, so its best is 0 or 1 per image: flag the k most probable,
    # k maximising the F1 expected under the posterior
    top = np.sort(post)[::-1]
    k = int(np.argmax(2 * np.cumsum(top) / (np.arange(1, n_test + 1) + post.sum())))
    oracle = pd.DataFrame({'id': answer['id'], 'label': (post >= top[k]).astype(float)})
    return {
        'files': files,
        'answer': answer,
        'sample': pd.DataFrame({'id': answer['id'], 'label': 0.15}),
        'oracle': oracle,
        'grading': {'metric': 'pf1', 'id': 'id', 'columns': ['label']},
    }


RSNA = '''Xtr, Xte = Xtr / 255.0, Xte / 255.0
from scipy.ndimage import uniform_filter
from sklearn.linear_model import LogisticRegression


def features(X):
    s = uniform_filter(X, (1, 5, 5))
    return np.c_[s.reshape(len(X), -1).max(1), X.reshape(len(X), -1).mean(1), X.reshape(len(X), -1).std(1)]


model = LogisticRegression(C=1.0 + 0.1 * args.seed, class_weight='balanced', max_iter=300).fit(features(Xtr), ytr)
p = model.predict_proba(features(Xte))[:, 1]
pd.DataFrame({'id': test['id'], 'label': (p > 0.5).astype(float)}).to_csv(args.out, index=False)
'''
register(
    Template(
        'cv-rsna',
        'vision',
        'RSNA Breast Cancer (procedural)',
        'rare-positive mammogram classification with probabilistic F1',
        'pf1',
        False,
        _rsna,
        STARTER_HEAD + LOAD + RSNA,
        {},
        'Each 16x16 greyscale mammogram is positive (1) or negative (0); submit a probability of positive per image (probabilistic F1).',
    )
)
