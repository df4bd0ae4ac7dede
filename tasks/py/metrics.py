# Metrics for generated tasks, numpy only, so that evaluators start fast and
# need nothing beyond numpy and pandas. Shared by the task generator (to set
# thresholds) and inlined into every evaluator.py.
import numpy as np

LOWER_IS_BETTER = {
    "rmse": True,
    "mae": True,
    "log_loss": True,
    "accuracy": False,
    "macro_f1": False,
    "roc_auc": False,
    "r2": False,
    "quadratic_weighted_kappa": False,
}
PROBABILISTIC = {"roc_auc", "log_loss"}


def accuracy(y, p):
    return float(np.mean(np.asarray(y) == np.asarray(p)))


def macro_f1(y, p):
    y, p = np.asarray(y), np.asarray(p)
    scores = []
    for c in np.unique(y):
        tp = np.sum((p == c) & (y == c))
        fp = np.sum((p == c) & (y != c))
        fn = np.sum((p != c) & (y == c))
        scores.append(0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn))
    return float(np.mean(scores))


def _binary_auc(y, s):
    y = np.asarray(y, dtype=float)
    s = np.asarray(s, dtype=float)
    pos, neg = y == 1, y == 0
    if pos.sum() == 0 or neg.sum() == 0:
        return 0.5
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    sorted_s = s[order]
    i = 0
    while i < len(s):  # average ranks over ties
        j = i
        while j + 1 < len(s) and sorted_s[j + 1] == sorted_s[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return float((ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * neg.sum()))


def roc_auc(y_onehot, prob):
    """Binary: one column of P(positive); multiclass: macro one-vs-rest over columns."""
    y_onehot, prob = np.asarray(y_onehot, dtype=float), np.asarray(prob, dtype=float)
    if y_onehot.ndim == 1:
        return _binary_auc(y_onehot, prob)
    return float(np.mean([_binary_auc(y_onehot[:, k], prob[:, k]) for k in range(y_onehot.shape[1])]))


def log_loss(y_onehot, prob):
    y_onehot, prob = np.asarray(y_onehot, dtype=float), np.asarray(prob, dtype=float)
    if y_onehot.ndim == 1:
        y_onehot = np.stack([1 - y_onehot, y_onehot], axis=1)
        prob = np.stack([1 - prob, prob], axis=1)
    prob = np.clip(prob, 1e-15, 1.0)
    prob = prob / prob.sum(axis=1, keepdims=True)
    return float(-np.mean(np.sum(y_onehot * np.log(prob), axis=1)))


def rmse(y, p):
    return float(np.sqrt(np.mean((np.asarray(y, float) - np.asarray(p, float)) ** 2)))


def mae(y, p):
    return float(np.mean(np.abs(np.asarray(y, float) - np.asarray(p, float))))


def r2(y, p):
    y, p = np.asarray(y, float), np.asarray(p, float)
    ss = np.sum((y - y.mean()) ** 2)
    return float(1 - np.sum((y - p) ** 2) / ss) if ss > 0 else 0.0


def quadratic_weighted_kappa(y, p):
    y, p = np.asarray(y, int), np.asarray(p, int)
    lo, hi = min(y.min(), p.min()), max(y.max(), p.max())
    k = hi - lo + 1
    if k <= 1:
        return 1.0
    obs = np.zeros((k, k))
    for a, b in zip(y - lo, p - lo):
        obs[a, b] += 1
    w = np.array([[(i - j) ** 2 for j in range(k)] for i in range(k)]) / (k - 1) ** 2
    exp = np.outer(obs.sum(1), obs.sum(0)) / obs.sum()
    den = (w * exp).sum()
    return float(1 - (w * obs).sum() / den) if den > 0 else 0.0


METRICS = {
    "accuracy": accuracy,
    "macro_f1": macro_f1,
    "roc_auc": roc_auc,
    "log_loss": log_loss,
    "rmse": rmse,
    "mae": mae,
    "r2": r2,
    "quadratic_weighted_kappa": quadratic_weighted_kappa,
}
