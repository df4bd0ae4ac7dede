# Part of generate_task_env.py (see taskgen_core.py); concatenated in the order of TASKGEN_PARTS.
# The synthetic leaderboard's teams: a few dozen reference runs of the kinds of
# pipeline a Kaggle field holds (a prior, linear models at several
# regularizations, trees of several depths, forests and boosting of several
# sizes, nearest neighbours, naive Bayes), each on all features or on a seeded
# subset, and the ensembles on two seeds. Their submissions are graded by the
# task's own evaluator and ranked; MLE-bench's rule then sets the thresholds
# (tasks/leaderboard.ts), as it does for a real competition. A spread of
# strengths is the point: the median must sit among real models, not next to
# the prior, or a random submission passes it.
import math
import os

import numpy as np
import pandas as pd


def feature_sets(spec, d):
    """Column indices per feature set: all of them, and two seeded halves (the same for every team)."""
    rng = rng_for(spec, 7)
    half = max(1, math.ceil(d / 2))
    return {
        "all": np.arange(d),
        "a": np.sort(rng.choice(d, half, replace=False)),
        "b": np.sort(rng.choice(d, half, replace=False)),
    }


def roster(regression):
    """(team name, feature set, model factory) for every team but the prior."""
    from sklearn import ensemble, linear_model, naive_bayes, neighbors, tree

    teams = []
    for fs in ("all", "a"):
        for c in (0.03, 0.3, 3.0):
            if regression:
                teams.append((f"ridge-a{1 / c:g}-{fs}", fs, lambda c=c: linear_model.Ridge(alpha=1.0 / c)))
            else:
                teams.append(
                    (f"logreg-c{c:g}-{fs}", fs, lambda c=c: linear_model.LogisticRegression(C=c, max_iter=2000))
                )
        for depth in (2, 4, 8):
            cls = tree.DecisionTreeRegressor if regression else tree.DecisionTreeClassifier
            teams.append((f"tree-d{depth}-{fs}", fs, lambda depth=depth, cls=cls: cls(max_depth=depth, random_state=0)))
    for fs in ("all", "b"):
        for k in (3, 9, 25):
            cls = neighbors.KNeighborsRegressor if regression else neighbors.KNeighborsClassifier
            teams.append((f"knn-k{k}-{fs}", fs, lambda k=k, cls=cls: cls(n_neighbors=k)))
    if not regression:
        for fs in ("all", "b"):
            teams.append((f"naive-bayes-{fs}", fs, lambda: naive_bayes.GaussianNB()))
        # Class-weighted models: what teams chasing macro-F1 or kappa on imbalanced classes submit.
        for c in (0.1, 1.0):
            teams.append(
                (
                    f"logreg-balanced-c{c:g}",
                    "all",
                    lambda c=c: linear_model.LogisticRegression(C=c, max_iter=2000, class_weight="balanced"),
                )
            )
        teams.append(
            (
                "forest-balanced-n100",
                "all",
                lambda: ensemble.RandomForestClassifier(
                    n_estimators=100, class_weight="balanced", random_state=0, n_jobs=1
                ),
            )
        )
    for seed in (0, 1):
        for n in (10, 50, 150):
            cls = ensemble.RandomForestRegressor if regression else ensemble.RandomForestClassifier
            teams.append(
                (
                    f"forest-n{n}-s{seed}",
                    "all",
                    lambda n=n, seed=seed, cls=cls: cls(n_estimators=n, random_state=seed, n_jobs=1),
                )
            )
        for n in (30, 100):
            cls = ensemble.GradientBoostingRegressor if regression else ensemble.GradientBoostingClassifier
            teams.append(
                (
                    f"boosting-n{n}-s{seed}",
                    "all",
                    lambda n=n, seed=seed, cls=cls: cls(
                        n_estimators=n, max_depth=3, subsample=0.8, max_features="sqrt", random_state=seed
                    ),
                )
            )
    return teams


# Full-scale tasks run to hundreds of thousands of rows: the teams train on a seeded sample of this many, so
# that building the leaderboard stays minutes at most (micro-scale tasks are far below it).
MAX_TEAM_ROWS = 5000
# Nearest neighbours predict in time test rows x training rows: on a full-scale task they keep fewer.
MAX_KNN_ROWS = 1000


def team_predictions(spec, x_train, y_train, x_test):
    """Every team's predictions: labels, values or probabilities, as the metric needs."""
    from sklearn.preprocessing import StandardScaler

    regression = spec["target"]["kind"] == "regression"
    ok = ~np.isnan(y_train) if regression else np.ones(len(y_train), bool)
    if ok.sum() > MAX_TEAM_ROWS:
        keep = np.sort(rng_for(spec, 8).choice(np.flatnonzero(ok), MAX_TEAM_ROWS, replace=False))
        ok = np.zeros(len(y_train), bool)
        ok[keep] = True
    sc = StandardScaler().fit(x_train)
    a, b = sc.transform(x_train)[ok], sc.transform(x_test)
    y = y_train[ok]
    sets = feature_sets(spec, a.shape[1])
    knn_rows = (
        np.sort(rng_for(spec, 9).choice(len(y), MAX_KNN_ROWS, replace=False)) if len(y) > MAX_KNN_ROWS else slice(None)
    )
    if regression:
        out = {"prior": np.full(len(b), float(np.mean(y)))}
        for name, fs, make in roster(True):
            if name.startswith("knn") and len(y) <= int(name.split("-")[1][1:]):
                continue
            rows = knn_rows if name.startswith("knn") else slice(None)
            out[name] = make().fit(a[rows][:, sets[fs]], y[rows]).predict(b[:, sets[fs]])
        return out
    k = len(spec["target"]["classes"])
    counts = np.bincount(y, minlength=k)
    prior = counts / counts.sum()
    prob = spec["metric"] in ("roc_auc", "log_loss")
    out = {"prior": np.tile(prior, (len(b), 1)) if prob else np.full(len(b), int(np.argmax(counts)))}
    for name, fs, make in roster(False):
        if name.startswith("knn") and len(y) <= int(name.split("-")[1][1:]):
            continue
        rows = knn_rows if name.startswith("knn") else slice(None)
        m = make().fit(a[rows][:, sets[fs]], y[rows])
        if prob:
            p = np.zeros((len(b), k))
            p[:, m.classes_] = m.predict_proba(b[:, sets[fs]])
            # Shrunk toward the prior, as anyone submitting probabilities would: a tree's 0 or 1 costs log-loss dearly.
            out[name] = 0.65 * p + 0.35 * prior
        else:
            out[name] = m.predict(b[:, sets[fs]])
    return out


def series_team_predictions(df_train, y_train, df_test):
    """Forecasting teams: the mean, a linear trend, and every roster model on the trend's residuals, from the
    driver and the step's phase for several candidate periods."""
    from sklearn.linear_model import LinearRegression

    ok = ~np.isnan(y_train)
    t_tr, t_te = df_train["step"].to_numpy(float), df_test["step"].to_numpy(float)
    d_tr, d_te = df_train["driver"].to_numpy(float), df_test["driver"].to_numpy(float)

    def phase(t):
        return np.stack([f(2 * np.pi * t / p) for f in (np.sin, np.cos) for p in range(5, 30)], axis=1)

    trend = LinearRegression().fit(np.c_[t_tr, d_tr][ok], y_train[ok])
    base_tr, base_te = trend.predict(np.c_[t_tr, d_tr]), trend.predict(np.c_[t_te, d_te])
    spec = {"target": {"kind": "regression"}, "seed": 0}
    resid = team_predictions(spec, np.c_[phase(t_tr), d_tr], y_train - base_tr, np.c_[phase(t_te), d_te])
    out = {"prior": np.full(len(df_test), float(np.nanmean(y_train))), "trend": base_te}
    for name, r in resid.items():
        if name != "prior":
            out[f"trend+{name}"] = base_te + r
    return out


def prediction_frame(spec, ids, pred):
    """A submission in the sample's columns: labels, probabilities (one column when binary) or values."""
    tname = spec["target"]["name"]
    if spec["target"]["kind"] == "regression":
        return pd.DataFrame({"id": ids, tname: np.round(np.asarray(pred, float), 6)})
    names = class_names(spec)
    pred = np.asarray(pred)
    if spec["metric"] in ("roc_auc", "log_loss"):
        if len(names) == 2:
            return pd.DataFrame({"id": ids, tname: np.round(pred[:, 1], 6)})
        return pd.DataFrame({"id": ids, **{names[j]: np.round(pred[:, j], 6) for j in range(len(names))}})
    return pd.DataFrame({"id": ids, tname: np.asarray(names, dtype=object)[pred.astype(int)]})


def write_teams(spec, folder, ids, preds):
    os.makedirs(folder, exist_ok=True)
    for name, pred in preds.items():
        write_csv(prediction_frame(spec, ids, pred), os.path.join(folder, f"{name}.csv"))
    return sorted(preds)
