# The solution kit: what the scripted reference agents (random, majority,
# linear, forest, boosted) run to solve any task the factory makes; lgbm
# (LightGBM, where it imports) is there for agents that ask for it. It reads
# public/, turns every modality into a feature matrix (tabular one-hot,
# image colour statistics and thumbnails, text TF-IDF, audio spectra, graph
# neighbour means, time-series phases), fits the strategy's model and writes
# submission.csv in the sample's format. An agent's script is this file
# followed by `solve("forest")`. Every fitted strategy also prints a
# validation score in the task's own metric (read from description.md), so
# that an agent can keep its best submission and a search can rank drafts.
import os
import wave

import numpy as np
import pandas as pd

PUBLIC = "public"


def sample_file():
    """The sample submission: sample_submission.csv, else the one CSV of public/ named as a sample
    (MLE-bench keeps each competition's own name, e.g. sample_submission_null.csv)."""
    names = sorted(f for f in os.listdir(PUBLIC) if f.lower().endswith(".csv") and "sample" in f.lower())
    return "sample_submission.csv" if "sample_submission.csv" in names or not names else names[0]


def train_file(test_cols, target):
    """The training table: train.csv, else the CSV of public/ (neither test nor sample) that holds the
    target, or failing that every test column (MLE-bench's taxi fares call it labels.csv)."""
    if os.path.exists(os.path.join(PUBLIC, "train.csv")):
        return "train.csv"
    others = sorted(
        f for f in os.listdir(PUBLIC) if f.lower().endswith(".csv") and f not in ("test.csv", sample_file())
    )
    headers = {f: list(pd.read_csv(os.path.join(PUBLIC, f), nrows=0).columns) for f in others}
    for f, cols in headers.items():
        if target is not None and target in cols:
            return f
    for f, cols in headers.items():
        if set(test_cols) <= set(cols):
            return f
    raise FileNotFoundError(
        f"no training table in {PUBLIC}/ (looked for train.csv and {', '.join(others) or 'other CSVs'})"
    )


def load_task():
    """train, test, sample, what is asked, and the key columns: the sample's columns that the test
    table has too, copied into the submission as they are (id in most tasks; key, or Date and Comment)."""
    sample_name = sample_file()
    head = pd.read_csv(os.path.join(PUBLIC, sample_name), nrows=0)
    test_cols = list(pd.read_csv(os.path.join(PUBLIC, "test.csv"), nrows=0).columns)
    keys = [c for c in head.columns if c in test_cols] or ["id"]
    as_str = {k: str for k in keys}
    read = lambda name: pd.read_csv(os.path.join(PUBLIC, name), dtype=as_str)  # noqa: E731
    sample, test = read(sample_name), read("test.csv")
    cols = [c for c in sample.columns if c not in keys]
    train = read(train_file(test_cols, cols[0] if len(cols) == 1 else None))
    info = {"keys": keys, "columns": list(sample.columns)}
    if len(cols) > 1:
        return train, test, sample, {**info, "kind": "prob", "classes": cols, "target": None}
    target = cols[0]
    y = train[target]
    labels = set(y.dropna().astype(str))
    shown = sample[target]
    # The sample's column says what is asked: labels when it holds labels, else numbers; a ranking or
    # log-loss metric on two classes asks for the probability even where the sample holds a label.
    ranked = (
        task_metric() in ("roc_auc", "log_loss") and pd.api.types.is_numeric_dtype(shown) and shown.between(0, 1).all()
    )
    if (not pd.api.types.is_numeric_dtype(shown) or set(shown.astype(str)) <= labels) and not (
        ranked and len(labels) == 2
    ):
        return train, test, sample, {**info, "kind": "label", "classes": sorted(labels), "target": target}
    if len(labels) == 2 and shown.between(0, 1).all():
        # Which class the probability is for, as the description states it.
        import re

        desc = (
            open(os.path.join(PUBLIC, "description.md")).read()
            if os.path.exists(os.path.join(PUBLIC, "description.md"))
            else ""
        )
        m = re.search(r"probability that \S+ is `([^`]+)`", desc)
        positive = m.group(1) if m and m.group(1) in labels else sorted(labels)[1]
        return (
            train,
            test,
            sample,
            {
                **info,
                "kind": "prob",
                "classes": [c for c in sorted(labels) if c != positive] + [positive],
                "target": target,
            },
        )
    return train, test, sample, {**info, "kind": "value", "classes": [], "target": target}


def read(name):
    return pd.read_csv(os.path.join(PUBLIC, name), dtype={"id": str})


def target_of(train, info):
    if info["target"] is not None:
        return info["target"]
    # Multi-class probabilities: the label column is the train column that holds the class names.
    for c in train.columns:
        if c not in info["keys"] and set(train[c].dropna().astype(str)) <= set(info["classes"]):
            return c
    raise ValueError("cannot find the label column")


def image_features(paths):
    from PIL import Image

    out = []
    for p in paths:
        img = Image.open(os.path.join(PUBLIC, p)).convert("RGB")
        rgb = np.asarray(img, dtype=float) / 255.0
        grey = rgb.mean(axis=2)
        ink = float(np.mean(np.abs(grey - np.median(grey)) > 0.08))
        thumb = np.asarray(img.convert("L").resize((8, 8)), dtype=float).ravel() / 255.0
        out.append(np.concatenate([rgb.mean(axis=(0, 1)), rgb.std(axis=(0, 1)), [ink, float(np.median(grey))], thumb]))
    return np.array(out)


def audio_features(paths):
    out = []
    for p in paths:
        with wave.open(os.path.join(PUBLIC, p)) as w:
            x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(float)
        spectrum = np.abs(np.fft.rfft(x))
        out.append(np.log1p([b.mean() for b in np.array_split(spectrum, 32)]))
    return np.array(out)


def graph_features(train, test):
    edges = read(os.path.join("graph", "edges.csv"))
    both = pd.concat([train, test], ignore_index=True)
    cols = [c for c in both.columns if c.startswith("x")]
    x = both[cols].to_numpy(float)
    index = {i: k for k, i in enumerate(both["id"])}
    agg, cnt = np.zeros_like(x), np.zeros(len(x))
    for a, b in zip(edges["source"], edges["target"]):
        i, j = index.get(str(a)), index.get(str(b))
        if i is None or j is None:
            continue
        agg[i] += x[j]
        agg[j] += x[i]
        cnt[i] += 1
        cnt[j] += 1
    feats = np.concatenate([x, agg / np.maximum(cnt, 1)[:, None], cnt[:, None]], axis=1)
    return feats[: len(train)], feats[len(train) :]


def text_columns(test):
    """Columns of free text: strings of several words, nearly all different (a comment, a review)."""
    out = []
    for c in test.columns:
        s = test[c].dropna().astype(str)
        if (
            len(s)
            and not pd.api.types.is_numeric_dtype(test[c])
            and s.str.split().str.len().mean() >= 4
            and s.nunique() > 0.5 * len(s)
        ):
            out.append(c)
    return out


def tabular_features(train, test, drop, keys=("id",)):
    # design_matrix (tasks/py/design_matrix.py) is appended to this file when it ships.
    def keep(df):
        return df.drop(columns=[c for c in keys if c in df.columns])

    return design_matrix(keep(train.drop(columns=drop, errors="ignore")), keep(test))


def features(train, test, target, keys=("id",)):
    if "image" in test.columns:
        return image_features(train["image"]), image_features(test["image"])
    if "audio" in test.columns:
        return audio_features(train["audio"]), audio_features(test["audio"])
    texts = ["text"] if "text" in test.columns else text_columns(test)
    if texts:
        from sklearn.feature_extraction.text import TfidfVectorizer

        joined = lambda df: df[texts].fillna("").astype(str).agg(" ".join, axis=1)  # noqa: E731
        vec = TfidfVectorizer(ngram_range=(1, 2))
        return vec.fit_transform(joined(train)).toarray(), vec.transform(joined(test)).toarray()
    if os.path.exists(os.path.join(PUBLIC, "graph", "edges.csv")):
        return graph_features(train.drop(columns=[target]), test)
    return tabular_features(train, test, [target], keys)


def phases(t):
    return np.stack([f(2 * np.pi * t / p) for p in range(5, 30) for f in (np.sin, np.cos)], axis=1)


class Detrended:
    """Time series: a linear trend on (step, driver), then a model of the residual on
    the step's phase for many candidate periods. Columns 0 and 1 of x are step and driver."""

    def __init__(self, residual):
        self.residual = residual

    def fit(self, x, y):
        from sklearn.linear_model import LinearRegression

        self.trend = LinearRegression().fit(x[:, :2], y)
        if self.residual is not None:
            self.residual.fit(np.c_[phases(x[:, 0]), x[:, 1]], y - self.trend.predict(x[:, :2]))
        return self

    def predict(self, x):
        out = self.trend.predict(x[:, :2])
        return out if self.residual is None else out + self.residual.predict(np.c_[phases(x[:, 0]), x[:, 1]])


# Capacity presets an agent can choose: fewer or more trees and iterations, stronger or weaker regularisation.
SIZES = {
    "small": {"trees": 50, "iters": 50, "alpha": 10.0},
    "default": {"trees": 200, "iters": 150, "alpha": 1.0},
    "large": {"trees": 400, "iters": 300, "alpha": 0.1},
}


def base_model(name, regression, series=False, size="default"):
    from sklearn.ensemble import (
        HistGradientBoostingClassifier,
        HistGradientBoostingRegressor,
        RandomForestClassifier,
        RandomForestRegressor,
    )
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    z = SIZES[size]
    if name == "lgbm":
        return lgbm_model(regression or series, z, series)
    if series:
        residual = {
            "linear": None,
            "forest": RandomForestRegressor(n_estimators=z["trees"], random_state=0),
            "gbm": HistGradientBoostingRegressor(max_iter=z["iters"], learning_rate=0.05, random_state=0),
        }[name]
        return Detrended(residual)
    if name == "linear":
        return make_pipeline(
            StandardScaler(),
            Ridge(alpha=z["alpha"]) if regression else LogisticRegression(C=1.0 / z["alpha"], max_iter=2000),
        )
    if name == "forest":
        return (RandomForestRegressor if regression else RandomForestClassifier)(
            n_estimators=z["trees"], random_state=0
        )
    if name == "gbm":
        # Small data: shallow trees, strong leaf regularisation, a slow learning rate.
        kw = dict(
            max_iter=z["iters"],
            learning_rate=0.05,
            max_leaf_nodes=8,
            min_samples_leaf=4,
            l2_regularization=1.0,
            random_state=0,
        )
        return HistGradientBoostingRegressor(**kw) if regression else HistGradientBoostingClassifier(**kw)
    raise ValueError(f"unknown model {name}")


def lgbm_model(regression, z, series=False):
    """LightGBM with the gbm model's small-data settings; one thread and deterministic, so that the
    same data gives the same submission."""
    import lightgbm as lgb

    kw = dict(
        n_estimators=z["iters"],
        learning_rate=0.05,
        num_leaves=8,
        min_child_samples=4,
        reg_lambda=1.0,
        random_state=0,
        n_jobs=1,
        deterministic=True,
        force_col_wise=True,
        verbose=-1,
    )
    model = lgb.LGBMRegressor(**kw) if regression else lgb.LGBMClassifier(**kw)
    return Detrended(model) if series else model


def require(strategy):
    """Fails before any work when a strategy needs a package this interpreter lacks."""
    if strategy == "lgbm":
        try:
            import lightgbm  # noqa: F401
        except ImportError:
            import sys

            raise SystemExit(
                f"mlekit: strategy lgbm needs LightGBM, which {sys.executable} cannot import; use gbm (scikit-learn's gradient boosting) or run in the agent environment, which has it"
            ) from None


# The models a strategy chooses between, as tuples of base models whose predictions are averaged.
# boosted is the top of the ladder: gradient boosting cross-validated against the forest, the linear
# model and blends of them, submitting whichever validates best.
CANDIDATES = {
    "linear": [("linear",)],
    "forest": [("forest",)],
    "gbm": [("gbm",)],
    "lgbm": [("lgbm",)],
    "blend": [("gbm", "forest")],
    "boosted": [
        ("gbm",),
        ("gbm", "forest"),
        ("gbm", "forest", "linear"),
        ("forest",),
        ("linear",),
        ("forest", "linear"),
    ],
}


METRIC_PHRASES = [
    ("accuracy", "accuracy"),
    ("macro-averaged F1", "macro_f1"),
    ("ROC-AUC", "roc_auc"),
    ("(AUC)", "roc_auc"),
    ("logarithmic loss", "log_loss"),
    ("root mean squared", "rmse"),
    ("mean absolute", "mae"),
    ("R²", "r2"),
    ("quadratic weighted kappa", "quadratic_weighted_kappa"),
]
LOWER_IS_BETTER = {"log_loss", "rmse", "mae"}


def task_metric():
    """The metric description.md names under Evaluation (None when it names none the kit knows)."""
    path = os.path.join(PUBLIC, "description.md")
    text = open(path).read() if os.path.exists(path) else ""
    evaluation = text.split("## Evaluation", 1)[-1][:600]
    for phrase, name in METRIC_PHRASES:
        if phrase.lower() in evaluation.lower():
            return name
    return None


def score(metric, y, pred, classes):
    """Score predictions in the submission's representation: values, labels or class probabilities."""
    from sklearn import metrics as M

    if metric in ("rmse", "mae", "r2") or not classes:
        y, pred = np.asarray(y, float), np.asarray(pred, float)
        return {"mae": M.mean_absolute_error(y, pred), "r2": M.r2_score(y, pred)}.get(
            metric, float(np.sqrt(M.mean_squared_error(y, pred)))
        )
    labels = np.asarray(classes, dtype=object)[pred.argmax(axis=1)]
    if metric == "macro_f1":
        return M.f1_score(y, labels, average="macro")
    if metric == "quadratic_weighted_kappa":
        return M.cohen_kappa_score(y, labels, weights="quadratic")
    if metric in ("roc_auc", "log_loss"):
        onehot = (np.asarray(y)[:, None] == np.asarray(classes)[None, :]).astype(float)
        if metric == "log_loss":
            return M.log_loss(onehot, np.clip(pred, 1e-15, 1))
        if len(classes) == 2:
            return M.roc_auc_score(onehot[:, 1], pred[:, 1]) if 0 < onehot[:, 1].sum() < len(y) else 0.5
        present = onehot.sum(axis=0) > 0
        return M.roc_auc_score(onehot[:, present], pred[:, present], average="macro") if present.sum() > 1 else 0.5
    return M.accuracy_score(y, labels)


def fit_predict(make, x_tr, y_tr, x_te, classes, prior):
    model = make().fit(x_tr, y_tr)
    if not classes:
        return model.predict(x_te)
    raw = model.predict_proba(x_te)
    known = list(model.classes_) if hasattr(model, "classes_") else list(model.steps[-1][1].classes_)
    proba = np.zeros((len(x_te), len(classes)))
    for j, c in enumerate(known):
        proba[:, classes.index(c)] = raw[:, j]
    return 0.85 * proba + 0.15 * prior  # never certain: log-loss punishes it


# Predictions already computed in this workspace, by model, capacity and a fingerprint of the data they
# were computed from: a later turn's ladder reuses the earlier turns' cross-validation and fits instead of
# recomputing them. Every model is seeded, so a reused prediction is the one a refit would give.
MEMO = ".mlekit_memo"


def fingerprint(*parts):
    import hashlib

    h = hashlib.sha256()
    for p in parts:
        a = np.asarray(p)
        h.update((a.dtype.str if a.dtype != object else "object").encode() + str(a.shape).encode())
        h.update(a.tobytes() if a.dtype != object else "\0".join(map(str, a.ravel())).encode())
    return h.hexdigest()[:24]


def memo(kind, name, size, fp, compute):
    path = os.path.join(MEMO, f"{kind}-{name}-{size}-{fp}.npy")
    try:
        return np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        pass
    value = np.asarray(compute())
    try:
        os.makedirs(MEMO, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp.npy"
        np.save(tmp, value, allow_pickle=False)
        os.replace(tmp, path)
    except (OSError, ValueError):
        pass  # a full workspace only costs the reuse
    return value


def out_of_fold(names, x, y, classes, prior, regression, series, folds=5, size="default"):
    """Out-of-fold predictions of each base model on the same folds (the last quarter as the one fold
    for a time series), so that blends are scored without refitting."""
    from sklearn.model_selection import KFold

    if series:
        cut = int(len(y) * 0.75)
        splits = [(np.arange(cut), np.arange(cut, len(y)))]
    else:
        splits = list(KFold(min(folds, len(y)), shuffle=True, random_state=0).split(x))
    truth = np.concatenate([y[va] for _, va in splits])
    fp = fingerprint(
        x,
        y,
        np.asarray(classes, dtype=object),
        np.asarray([] if prior is None else prior),
        [folds, int(series), int(regression)],
    )
    preds = {}
    for name in names:
        make = lambda name=name: base_model(name, regression, series, size)  # noqa: E731
        preds[name] = memo(
            "oof",
            name,
            size,
            fp,
            lambda make=make: np.concatenate(
                [fit_predict(make, x[tr], y[tr], x[va], classes, prior) for tr, va in splits]
            ),
        )
    return truth, preds


def better(a, b, metric):
    return b is None or (a < b if metric in LOWER_IS_BETTER else a > b)


def solve(strategy, out="submission.csv", keep_best=False, size="default"):
    """Write a submission with one strategy (random, majority, linear, forest, gbm, lgbm, blend,
    boosted) at a capacity (small, default, large); with keep_best, only when its validation score
    beats the best one written so far (recorded in .mlekit_best.json). lgbm needs LightGBM."""
    require(strategy)
    train, test, sample, info = load_task()
    rng = np.random.default_rng(0)
    target = target_of(train, info)
    ids = test[info["keys"]]
    series = "step" in test.columns and "driver" in test.columns
    classes = [] if info["kind"] == "value" or series else info["classes"]
    metric = task_metric() or ("rmse" if not classes else "accuracy")
    y_all = train[target]
    ok = y_all.notna().to_numpy()
    y = y_all.to_numpy(float)[ok] if not classes else y_all.astype(str).to_numpy()
    counts = np.array([np.sum(y == c) for c in classes], float)
    prior = counts / counts.sum() if classes else None
    valid = None
    if strategy == "random":
        pred = rng.dirichlet(np.ones(len(classes)), len(test)) if classes else rng.uniform(y.min(), y.max(), len(test))
    elif strategy == "majority":
        pred = np.tile(prior, (len(test), 1)) if classes else np.full(len(test), y.mean())
    else:
        if series:
            x_tr = np.c_[train["step"].to_numpy(float), train["driver"].to_numpy(float)]
            x_te = np.c_[test["step"].to_numpy(float), test["driver"].to_numpy(float)]
        else:
            x_tr, x_te = features(train, test, target, info["keys"])
        if not classes:
            x_tr = x_tr[ok]  # rows whose target is missing cannot be fitted
        options = CANDIDATES[strategy]
        truth, oof = out_of_fold(
            sorted({n for c in options for n in c}), x_tr, y, classes, prior, not classes, series, size=size
        )
        scored = {c: float(score(metric, truth, np.mean([oof[n] for n in c], axis=0), classes)) for c in options}
        best = options[0]
        for c in options:
            print(f"cv {'+'.join(c)}: {scored[c]:.6f}")
            if better(scored[c], scored[best], metric):
                best = c
        valid = scored[best]
        fp = fingerprint(
            x_tr, y, x_te, np.asarray(classes, dtype=object), np.asarray([] if prior is None else prior), [int(series)]
        )
        fits = [
            memo(
                "fit",
                n,
                size,
                fp,
                lambda n=n: fit_predict(
                    lambda: base_model(n, not classes, series, size), x_tr, y, x_te, classes, prior
                ),
            )
            for n in best
        ]
        pred = np.mean(fits, axis=0)
        print(f"validation score ({metric}): {valid:.6f}")
    if keep_best:
        path = ".mlekit_best.json"
        import json

        prev = json.load(open(path)) if os.path.exists(path) else None
        if prev is not None and (valid is None or not better(valid, prev["score"], metric)):
            print(f"kept the earlier submission ({prev['strategy']}, {prev['score']:.6f})")
            return
        if valid is not None:
            json.dump({"strategy": strategy, "score": valid}, open(path, "w"))
    write_submission(out, ids, target, info, classes, pred)
    print(f"wrote {out} ({strategy})")


def write_submission(out, ids, target, info, classes, pred):
    """The key columns as the test table has them, the predictions, in the sample's column order."""
    table = ids.reset_index(drop=True).copy()
    if not classes:
        table[target] = pred
    elif info["kind"] == "label":
        table[target] = np.asarray(classes, dtype=object)[pred.argmax(axis=1)]
    elif info["target"] is not None:  # binary probability of the second class
        table[target] = pred[:, 1]
    else:
        for j, c in enumerate(classes):
            table[c] = pred[:, j]
    table[info["columns"]].to_csv(out, index=False)
