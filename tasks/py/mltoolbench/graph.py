"""Graph templates: homophilous node graphs, BFS on small graphs, molecule-like graphs."""

import numpy as np
import pandas as pd
from scipy.special import ndtr

from .core import STARTER_HEAD, Template, register


def _sbm(rng, n, k, dim, homophily, deg, feat_noise):
    y = rng.integers(0, k, n)
    w = rng.pareto(2.0, n) + 1
    edges = set()
    for _ in range(n * deg // 2):
        a = rng.choice(n, p=w / w.sum())
        same = rng.random() < homophily
        pool = np.flatnonzero((y == y[a]) if same else (y != y[a]))
        b = rng.choice(pool)
        if a != b:
            edges.add((min(a, b), max(a, b)))
    cent = rng.normal(0, 1, (k, dim))
    X = cent[y] * 0.6 + rng.normal(0, feat_noise, (n, dim))
    E = np.array(sorted(edges))
    logpost = _label_logpost(y, E, w, X, cent, homophily, n * deg // 2, feat_noise)
    # columns on very different scales, as raw word weights are
    return y, E, X * 10 ** rng.uniform(-3.5, 0, dim), logpost


def _label_logpost(y, E, w, X, cent, homophily, draws, noise):
    """log P(y_i = c | every other true label, the edges, x_i), up to a constant per node: classes are drawn alike, features
    are Gaussian around 0.6 * centre, and each of the draws joins a node picked by weight w to one of its own class (homophily)
    or of another. Edges are taken as Poisson counts and class sizes as they are."""
    n, k = len(y), len(cent)
    size = np.bincount(y, minlength=k)
    # q[c, d]: the chance that one draw from a node of class c lands on a given node of class d
    q = np.where(np.eye(k, dtype=bool), homophily / size[:, None], (1 - homophily) / (n - size[:, None]))
    L = -((X[:, None] - 0.6 * cent[None]) ** 2).sum(2) / (2 * noise**2)
    for a, b in ((E[:, 0], E[:, 1]), (E[:, 1], E[:, 0])):
        np.add.at(L, a, np.log(w[a, None] * q[:, y[b]].T + w[b, None] * q[y[b]]))
    # an absent edge counts too: the others draw towards a node of class c in proportion to their weight times q[., c]
    return L - draws / w.sum() * (np.bincount(y, w, k) @ q)


def _nodes(n, k, dim, homophily, deg, noise, train_frac=0.5):
    def make(rng):
        y, E, X, logpost = _sbm(rng, n, k, dim, homophily, deg, noise)
        perm = rng.permutation(n)
        tr, te = perm[: int(train_frac * n)], np.sort(perm[int(train_frac * n) :])
        nodes = pd.DataFrame(X.round(4), columns=[f'f{i}' for i in range(dim)])
        nodes.insert(0, 'node', np.arange(n))
        labels = pd.DataFrame({'node': np.sort(tr), 'label': y[np.sort(tr)]})
        return {
            'files': {
                'nodes.csv': nodes,
                'edges.csv': pd.DataFrame(E, columns=['src', 'dst']),
                'train_labels.csv': labels,
                'test_nodes.csv': pd.DataFrame({'node': te}),
            },
            'answer': pd.DataFrame({'node': te, 'label': y[te]}),
            'sample': pd.DataFrame({'node': te, 'label': 0}),
            'oracle': pd.DataFrame({'node': te, 'label': logpost[te].argmax(1)}),
            'grading': {'metric': 'accuracy', 'id': 'node', 'columns': ['label']},
        }

    return make


NODE = '''import scipy.sparse as sp
from sklearn.linear_model import LogisticRegression

nodes = pd.read_csv(f'{D}/nodes.csv').sort_values('node')
edges = pd.read_csv(f'{D}/edges.csv')
train = pd.read_csv(f'{D}/train_labels.csv')
test = pd.read_csv(f'{D}/test_nodes.csv')
X = nodes.drop(columns='node').to_numpy(float)
n = len(X)
A = sp.coo_matrix((np.ones(len(edges)), (edges['src'], edges['dst'])), shape=(n, n)).tocsr()
A = A + A.T
FANOUT = None
if FANOUT:
    rows = [rng.choice(A[i].indices, min(FANOUT, len(A[i].indices)), replace=False) if len(A[i].indices) else [] for i in range(n)]
    A = sp.csr_matrix((np.ones(sum(map(len, rows))), (np.repeat(np.arange(n), list(map(len, rows))), np.concatenate([np.asarray(r, int) for r in rows]))), shape=(n, n))
A = A + sp.eye(n)
deg = np.asarray(A.sum(1)).ravel()
P = sp.diags(1 / deg) @ A
X = (X - X.mean(0)) / X.std(0)
HOPS = 2
H = X
for _ in range(HOPS):
    H = P @ H
F = np.c_[H, X]
model = LogisticRegression(C=1.0 + 0.1 * args.seed, max_iter=1000).fit(F[train['node']], train['label'])
pd.DataFrame({'node': test['node'], 'label': model.predict(F[test['node']])}).to_csv(args.out, index=False)
'''
SCALE = [('X = (X - X.mean(0)) / X.std(0)', 'X = X - X.mean(0)')]
REG = [('C=1.0 + 0.1 * args.seed', 'C=0.0005 + 0.0001 * args.seed')]
ABOUT = '`nodes.csv` holds node features, `edges.csv` undirected edges, `train_labels.csv` the labels of some nodes; predict the label of every node in `test_nodes.csv` (accuracy).'
register(
    Template(
        'graph-cora',
        'graph',
        'Cora (procedural)',
        'transductive node classification',
        'accuracy',
        False,
        _nodes(700, 7, 24, 0.85, 6, 1.6),
        STARTER_HEAD + NODE,
        {
            'feature scale': SCALE,
            'oversmoothing': [('HOPS = 2', 'HOPS = 40'), ('F = np.c_[H, X]', 'F = H')],
            'excessive regularization': REG,
        },
        ABOUT,
    )
)
register(
    Template(
        'graph-citeseer',
        'graph',
        'CiteSeer (procedural)',
        'transductive node classification',
        'accuracy',
        False,
        _nodes(700, 6, 24, 0.55, 4, 1.0),
        STARTER_HEAD + NODE,
        {
            'missing self information': [('A = A + sp.eye(n)', 'A = A + sp.eye(n) * 0'), ('F = np.c_[H, X]', 'F = H')],
            'feature scale': SCALE,
            'excessive regularization': REG,
        },
        ABOUT,
    )
)
register(
    Template(
        'graph-arxiv',
        'graph',
        'ogbn-arxiv (procedural)',
        'transductive node classification',
        'accuracy',
        False,
        _nodes(900, 8, 24, 0.8, 8, 2.0),
        STARTER_HEAD + NODE,
        {
            'feature scale': SCALE,
            'undersampled neighborhood': [('FANOUT = None\n', 'FANOUT = 1\n')],
            'excessive regularization': REG,
        },
        ABOUT,
    )
)


def _clrs(rng):
    rows, erows = [], []
    for g in range(300):
        n = int(rng.integers(6, 14))
        E = [(a, b) for a in range(n) for b in range(a + 1, n) if rng.random() < 1.6 / n]
        adj = {i: set() for i in range(n)}
        for a, b in E:
            adj[a].add(b)
            adj[b].add(a)
        dist = {0: 0}
        frontier = [0]
        while frontier:
            nxt = []
            for u in frontier:
                for v in adj[u]:
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        nxt.append(v)
            frontier = nxt
        rows += [(f'{g}_{i}', g, i, int(i == 0), min(dist.get(i, 4), 4)) for i in range(n)]
        erows += [(g, a, b) for a, b in E]
    df = pd.DataFrame(rows, columns=['id', 'graph', 'node', 'is_source', 'distance'])
    tr = df['graph'] < 200
    test = df[~tr].reset_index(drop=True)
    return {
        'files': {
            'train_nodes.csv': df[tr].reset_index(drop=True),
            'test_nodes.csv': test.drop(columns='distance'),
            'edges.csv': pd.DataFrame(erows, columns=['graph', 'src', 'dst']),
        },
        'answer': test[['id', 'distance']],
        'sample': test[['id']].assign(distance=4),
        # the distance follows from the graph's edges, which the files list
        'oracle': test[['id', 'distance']],
        'grading': {'metric': 'accuracy', 'id': 'id', 'columns': ['distance']},
    }


CLRS = '''from sklearn.linear_model import LogisticRegression

train = pd.read_csv(f'{D}/train_nodes.csv')
test = pd.read_csv(f'{D}/test_nodes.csv')
edges = pd.read_csv(f'{D}/edges.csv')
ROUNDS = 4
NMAX = 16
by_graph = {g: e for g, e in edges.groupby('graph')}


def hints(g):
    A = np.zeros((NMAX, NMAX))
    e = by_graph.get(g)
    if e is not None:
        A[e['src'], e['dst']] = A[e['dst'], e['src']] = 1
    h = [np.zeros(NMAX)]
    h[0][0] = 1
    for _ in range(ROUNDS):
        h.append(np.minimum(h[-1] + A @ h[-1], 1))
    H = np.stack(h[:ROUNDS + 1], 1)
    return H


def batch(df, labels):
    X, y, real = [], [], []
    for g, nodes in df.groupby('graph', sort=False):
        n = len(nodes)
        X.append(hints(g))
        lab = np.zeros(NMAX, int)
        if labels:
            lab[:n] = nodes['distance']
        y.append(lab)
        real.append(np.arange(NMAX) < n)
    return np.concatenate(X), np.concatenate(y), np.concatenate(real)


X, y, real = batch(train, True)
fit = real
model = LogisticRegression(C=10.0 + args.seed, max_iter=2000).fit(X[fit], y[fit])
Xt, _, real_t = batch(test, False)
pd.DataFrame({'id': test['id'], 'distance': model.predict(Xt[real_t])}).to_csv(args.out, index=False)
'''
register(
    Template(
        'graph-clrs',
        'graph',
        'CLRS BFS (procedural)',
        'breadth-first-search distance from node 0, capped at 4',
        'accuracy',
        False,
        _clrs,
        STARTER_HEAD + CLRS,
        {
            'hint misalignment': [('    H = np.stack(h[:ROUNDS + 1], 1)', '    H = np.stack(h[1:] + h[-1:], 1)')],
            'padding in loss': [('fit = real\n', 'fit = np.ones_like(real)\n')],
            'insufficient message rounds': [('ROUNDS = 4\n', 'ROUNDS = 1\n')],
        },
        'Each small graph (`edges.csv`, by `graph`) has a source node 0; predict every test node\'s BFS distance from it, 4 meaning 4 or more or unreachable (accuracy).',
    )
)


def _molecules(rng, bond_rule):
    rows, erows, labels, signal = [], [], [], []
    for m in range(700):
        n = int(rng.integers(5, 16) if bond_rule else rng.integers(4, 41))
        atoms = rng.choice(['C', 'N', 'O', 'S'], n, p=[0.6, 0.15, 0.15, 0.1])
        if not bond_rule:
            # a few nitrogens whatever the size: their share, not their count, sets the property
            atoms = rng.choice(['C', 'O', 'S'], n, p=[0.7, 0.2, 0.1])
            atoms[rng.choice(n, int(rng.integers(1, 5)), replace=False)] = 'N'
        bonds = [(i, int(rng.integers(0, i)), rng.choice([1, 2, 3], p=[0.7, 0.22, 0.08])) for i in range(1, n)]
        rows += [(m, i, a) for i, a in enumerate(atoms)]
        erows += [(m, a, b, t) for a, b, t in bonds]
        if bond_rule:
            signal.append(sum(t >= 2 for _, _, t in bonds) - 0.6 * np.sum(atoms == 'O'))
            score = signal[-1] + rng.normal(0, 0.6)
            labels.append(int(score > 1.5))
        else:
            signal.append(np.mean(atoms == 'N') - 0.5 * np.mean(atoms == 'S'))
            score = signal[-1] + rng.normal(0, 0.02)
            labels.append(int(score > 0.1))
    ids = np.arange(700)
    y = np.array(labels)
    tr = 500
    atoms_df = pd.DataFrame(rows, columns=['mol', 'atom', 'element'])
    return {
        'files': {
            'atoms.csv': atoms_df,
            'bonds.csv': pd.DataFrame(erows, columns=['mol', 'a', 'b', 'bond_order']),
            'train.csv': pd.DataFrame({'mol': ids[:tr], 'label': y[:tr]}),
            'test.csv': pd.DataFrame({'mol': ids[tr:]}),
        },
        'answer': pd.DataFrame({'mol': ids[tr:], 'label': y[tr:]}),
        'sample': pd.DataFrame({'mol': ids[tr:], 'label': 0.5}),
        # P(label 1): the noise-free score, which the atoms and bonds fix, past the threshold by the noise
        'oracle': pd.DataFrame(
            {
                'mol': ids[tr:],
                'label': ndtr((np.array(signal[tr:]) - (1.5 if bond_rule else 0.1)) / (0.6 if bond_rule else 0.02)),
            }
        ),
        'grading': {'metric': 'auc', 'id': 'mol', 'columns': ['label']},
    }


MOL = '''from sklearn.linear_model import LogisticRegression

atoms = pd.read_csv(f'{D}/atoms.csv')
bonds = pd.read_csv(f'{D}/bonds.csv')
train = pd.read_csv(f'{D}/train.csv')
test = pd.read_csv(f'{D}/test.csv')
ELEMENTS = ['C', 'N', 'O', 'S']
NMAX = 64
onehot = pd.get_dummies(atoms['element']).reindex(columns=ELEMENTS, fill_value=0).astype(float)
node = {m: g.to_numpy() for m, g in onehot.groupby(atoms['mol'])}
bond_counts = pd.crosstab(bonds['mol'], bonds['bond_order']).reindex(columns=[1, 2, 3], fill_value=0)


def embed(m):
    h = np.zeros((NMAX, len(ELEMENTS)))
    h[:len(node[m])] = node[m]
    pooled = h[:len(node[m])].mean(0)
    b = bond_counts.loc[m].to_numpy(float) if m in bond_counts.index else np.zeros(3)
    return np.r_[pooled, len(node[m]) / NMAX, b]


Xtr = np.stack([embed(m) for m in train['mol']])
Xte = np.stack([embed(m) for m in test['mol']])
model = LogisticRegression(C=1.0 + 0.1 * args.seed, max_iter=1000).fit(Xtr, train['label'])
pd.DataFrame({'mol': test['mol'], 'label': model.predict_proba(Xte)[:, 1]}).to_csv(args.out, index=False)
'''
register(
    Template(
        'graph-bbbp',
        'graph',
        'MoleculeNet BBBP (procedural)',
        'graph-level property of molecules',
        'auc',
        False,
        lambda rng: _molecules(rng, True),
        STARTER_HEAD + MOL,
        {
            'missing bond features': [
                (
                    "    b = bond_counts.loc[m].to_numpy(float) if m in bond_counts.index else np.zeros(3)",
                    "    b = np.zeros(3)",
                )
            ]
        },
        'Molecules are graphs: `atoms.csv` (element per atom) and `bonds.csv` (bond order); predict the probability of `label` 1 per test molecule (ROC AUC).',
    )
)
register(
    Template(
        'graph-bace',
        'graph',
        'MoleculeNet BACE (procedural)',
        'graph-level property of molecules',
        'auc',
        False,
        lambda rng: _molecules(rng, False),
        # this property does not depend on bonds, so its starter reads only the atoms
        STARTER_HEAD
        + MOL.replace(
            "    b = bond_counts.loc[m].to_numpy(float) if m in bond_counts.index else np.zeros(3)",
            "    b = np.zeros(0)",
        ),
        {
            'padding in pooling': [
                ("    h = np.zeros((NMAX, len(ELEMENTS)))", "    h = np.eye(len(ELEMENTS))[np.zeros(NMAX, int)]"),
                ("    pooled = h[:len(node[m])].mean(0)", "    pooled = h.mean(0)"),
                ("    return np.r_[pooled, len(node[m]) / NMAX, b]", "    return np.r_[pooled, b]"),
            ]
        },
        'Molecules are graphs: `atoms.csv` (element per atom) and `bonds.csv` (bond order); predict the probability of `label` 1 per test molecule (ROC AUC).',
    )
)
