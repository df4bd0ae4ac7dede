# Part of generate_task_env.py (see taskgen_core.py); concatenated in the order of TASKGEN_PARTS.
import json
import os

import numpy as np
import pandas as pd


# --- baselines and thresholds (Operation 3) ----------------------------------


def design_matrix(df_train, df_test):
    both = pd.concat([df_train, df_test], axis=0, ignore_index=True)
    for c in both.columns:
        if not pd.api.types.is_numeric_dtype(both[c]):
            top = both[c].value_counts().index[:20]
            both[c] = both[c].where(both[c].isin(top), "other")
        else:
            both[c] = both[c].fillna(both[c].median())
    both = pd.get_dummies(both, dtype=float).fillna(0.0)
    x = both.to_numpy(dtype=float)
    return x[: len(df_train)], x[len(df_train):]


def text_matrix(train_text, test_text):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=1)
    a = vec.fit_transform(train_text)
    return a.toarray(), vec.transform(test_text).toarray()


def score(spec, y_true, pred):
    # In generate_task_env.py the metric functions sit above this code; as a module they are imported.
    table = globals().get("METRICS")
    if table is None:
        import metrics

        table = metrics.METRICS
    return table[spec["metric"]](*prepare(spec, y_true, pred))


def prepare(spec, y_true, pred):
    """Metric arguments: indices/values for label metrics, one-hot and probabilities for probabilistic ones."""
    k = len(spec["target"].get("classes", []))
    if spec["metric"] in ("roc_auc", "log_loss"):
        onehot = np.eye(k)[np.asarray(y_true, int)]
        prob = np.asarray(pred, float)
        if k == 2:
            return onehot[:, 1], prob[:, 1]
        return onehot, prob
    return np.asarray(y_true), np.asarray(pred)


def baselines(spec, x_train, y_train, x_test):
    """Predictions of the majority/mean, linear and random-forest baselines (labels, values or probabilities)."""
    from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.preprocessing import StandardScaler

    sc = StandardScaler().fit(x_train)
    a, b = sc.transform(x_train), sc.transform(x_test)
    if spec["target"]["kind"] == "regression":
        mean = np.full(len(b), float(np.nanmean(y_train)))
        ok = ~np.isnan(y_train)
        lin = Ridge(alpha=1.0).fit(a[ok], y_train[ok]).predict(b)
        rf = RandomForestRegressor(n_estimators=100, random_state=0).fit(a[ok], y_train[ok]).predict(b)
        return {"median": mean, "bronze": lin, "silver": rf}
    k = len(spec["target"]["classes"])
    prob = spec["metric"] in ("roc_auc", "log_loss")
    counts = np.bincount(y_train, minlength=k)

    def full_proba(model, xs):
        p = np.zeros((len(xs), k))
        p[:, model.classes_] = model.predict_proba(xs)
        return p

    lr = LogisticRegression(max_iter=2000, C=1.0).fit(a, y_train)
    rf = RandomForestClassifier(n_estimators=100, random_state=0).fit(a, y_train)
    if prob:
        prior = np.tile(counts / counts.sum(), (len(b), 1))
        # Shrunk toward the prior, as anyone submitting probabilities would: raw forest votes are 0 or 1 too often.
        shrink = lambda q: 0.65 * q + 0.35 * prior
        return {"median": prior, "bronze": shrink(full_proba(lr, b)), "silver": shrink(full_proba(rf, b))}
    return {"median": np.full(len(b), int(np.argmax(counts))), "bronze": lr.predict(b), "silver": rf.predict(b)}


def timeseries_baselines(df_train, y_train, df_test):
    from sklearn.ensemble import RandomForestRegressor
    from sklearn.linear_model import LinearRegression

    ok = ~np.isnan(y_train)
    t_tr, t_te = df_train["step"].to_numpy(float), df_test["step"].to_numpy(float)
    x_tr, x_te = df_train["driver"].to_numpy(float), df_test["driver"].to_numpy(float)
    mean = np.full(len(df_test), float(np.nanmean(y_train)))
    lin = LinearRegression().fit(np.c_[t_tr, x_tr][ok], y_train[ok])
    lin_pred = lin.predict(np.c_[t_te, x_te])
    # A forest on the residuals of the trend, with the step's phase for several candidate periods.
    def phase(t):
        return np.stack([np.sin(2 * np.pi * t / p) for p in range(5, 30)] + [np.cos(2 * np.pi * t / p) for p in range(5, 30)], axis=1)

    resid = y_train[ok] - lin.predict(np.c_[t_tr, x_tr][ok])
    rf = RandomForestRegressor(n_estimators=200, random_state=0).fit(np.c_[phase(t_tr[ok]), x_tr[ok]], resid)
    rf_pred = lin_pred + rf.predict(np.c_[phase(t_te), x_te])
    return {"median": mean, "bronze": lin_pred, "silver": rf_pred}


PERFECT = {"rmse": 0.0, "mae": 0.0, "log_loss": 0.0}


def thresholds(spec, scores, oracle_score):
    """The threshold logic: median from the majority/mean baseline; silver from the stronger of the linear
    and forest baselines; bronze halfway between the weaker and the stronger one, so that reproducing the
    weaker model does not earn a medal and reproducing the stronger one is not a coin flip at its threshold;
    gold from the noise ceiling of the hidden rule, else the best baseline plus a margin. Returns the
    thresholds and the logic that set each one."""
    lower = spec["is_lower_better"]
    better = (lambda a, b: a < b) if lower else (lambda a, b: a > b)
    perfect = PERFECT.get(spec["metric"], 1.0)
    med = scores["median"]
    lin, rf = scores["bronze"], scores["silver"]
    weak, strong, names = (rf, lin, ("random forest", "linear model")) if better(lin, rf) else (lin, rf, ("linear model", "random forest"))
    silver = strong
    logic = {"median": "majority class / mean / class prior", "silver": f"{names[1]} (the stronger of the two models)"}
    if better(weak, med):
        bronze = weak + (strong - weak) / 2
        logic["bronze"] = f"halfway between the {names[0]} and the {names[1]}"
    else:
        # The weaker model did not beat the median: bronze sits midway between median and silver.
        bronze = med + (silver - med) / 2
        logic["bronze"] = "midway between median and silver (the weaker model did not beat the median)"
    best = silver if better(silver, med) else med
    if better(oracle_score, best):
        gold, logic["gold"] = oracle_score, "noise ceiling of the hidden rule"
    else:
        gold, logic["gold"] = best + 0.1 * (perfect - best), "best baseline plus 10% of the gap to a perfect score"
    r = lambda v: float(round(v, 6))
    th = {"gold_threshold": r(gold), "silver_threshold": r(silver), "bronze_threshold": r(bronze), "median_threshold": r(med)}
    return th, logic


# --- files ---------------------------------------------------------------------


def class_names(spec):
    return [str(c) for c in spec["target"].get("classes", [])]


def submission_frames(spec, ids, y_values, rng):
    """answer.csv and sample_submission.csv (same columns): labels, probabilities or values."""
    tname = spec["target"]["name"]
    metric = spec["metric"]
    if spec["target"]["kind"] == "regression":
        lo, hi = float(np.nanmin(y_values)), float(np.nanmax(y_values))
        return (pd.DataFrame({"id": ids, tname: np.round(y_values, 6)}),
                pd.DataFrame({"id": ids, tname: np.round(rng.uniform(lo, hi, len(ids)), 6)}))
    names = class_names(spec)
    k = len(names)
    y_values = np.asarray(y_values, int)
    if metric in ("roc_auc", "log_loss"):
        if k == 2:
            return (pd.DataFrame({"id": ids, tname: y_values.astype(float)}), pd.DataFrame({"id": ids, tname: np.full(len(ids), 0.5)}))
        onehot = np.eye(k)[y_values]
        ans = pd.DataFrame({"id": ids, **{names[j]: onehot[:, j] for j in range(k)}})
        sample = pd.DataFrame({"id": ids, **{names[j]: np.full(len(ids), round(1.0 / k, 6)) for j in range(k)}})
        return ans, sample
    labels = np.asarray(names, dtype=object)
    return (pd.DataFrame({"id": ids, tname: labels[y_values]}), pd.DataFrame({"id": ids, tname: labels[rng.integers(0, k, len(ids))]}))


def main(spec, out):
    kind = spec["generator"]
    ntr, nte = spec["n_train"], spec["n_test"]
    res = GENERATORS[kind](spec, out)
    df, y, oracle, rule = res[0], res[1], res[2], res[3]
    extra = res[4] if len(res) > 4 else None
    ids = spec["ids"]
    rng = rng_for(spec, 99)
    tname = spec["target"]["name"]
    train = df.iloc[:ntr].reset_index(drop=True)
    test = df.iloc[ntr:].reset_index(drop=True)
    y_train, y_test, oracle_test = np.asarray(y[:ntr]), np.asarray(y[ntr:]), np.asarray(oracle[ntr:])
    names = class_names(spec)

    m = mutation(spec, "label_noise")
    y_train_public = y_train.copy()
    if m and spec["target"]["kind"] != "regression":
        flip = rng.random(ntr) < m["rate"]
        y_train_public[flip] = rng.integers(0, len(names), flip.sum())

    pub = os.path.join(out, "public")
    priv = os.path.join(out, "private")
    os.makedirs(pub, exist_ok=True)
    os.makedirs(priv, exist_ok=True)
    shown_train = train.copy()
    shown_train.insert(0, "id", ids[:ntr])
    if spec["target"]["kind"] == "regression":
        shown_train[tname] = np.round(y_train_public, 6)
    else:
        shown_train[tname] = np.asarray(names, dtype=object)[np.asarray(y_train_public, int)]
    shown_test = test.copy()
    shown_test.insert(0, "id", ids[ntr:])
    write_csv(shown_train, os.path.join(pub, "train.csv"))
    write_csv(shown_test, os.path.join(pub, "test.csv"))
    answer, sample = submission_frames(spec, ids[ntr:], y_test, rng)
    write_csv(answer, os.path.join(priv, "answer.csv"))
    write_csv(sample, os.path.join(pub, "sample_submission.csv"))

    # Baselines see only what an agent sees (public features, public labels).
    if kind == "time-series-forecasting":
        preds = timeseries_baselines(train, y_train_public.astype(float), test)
    else:
        if kind == "text-classification":
            x_tr, x_te = text_matrix(train["text"], test["text"])
        elif extra is not None:
            x_tr, x_te = extra[:ntr], extra[ntr:]
        else:
            x_tr, x_te = design_matrix(train, test)
        yt = y_train_public.astype(float) if spec["target"]["kind"] == "regression" else y_train_public.astype(int)
        preds = baselines(spec, x_tr, yt, x_te)
    scores = {k: score(spec, y_test, v) for k, v in preds.items()}
    if spec["metric"] in ("roc_auc", "log_loss"):
        k = len(names)
        oracle_pred = np.full((len(oracle_test), k), 0.1 / max(1, k - 1))
        oracle_pred[np.arange(len(oracle_test)), np.asarray(oracle_test, int)] = 0.9
    else:
        oracle_pred = oracle_test
    oracle_score = score(spec, y_test, oracle_pred)
    th, logic = thresholds(spec, scores, oracle_score)
    with open(os.path.join(priv, "threshold.json"), "w") as f:
        json.dump(th, f, indent=2, sort_keys=True)
        f.write("\n")
    resolved = dict(spec)
    resolved["hidden_rule"] = rule
    resolved["baseline_scores"] = {k: round(float(v), 6) for k, v in scores.items()}
    resolved["noise_ceiling"] = round(float(oracle_score), 6)
    resolved["threshold_logic"] = logic
    with open(os.path.join(priv, "spec.json"), "w") as f:
        json.dump(resolved, f, indent=2, sort_keys=True, default=float)
        f.write("\n")
    print(json.dumps({"ok": True, "thresholds": th, "baselines": resolved["baseline_scores"], "noise_ceiling": resolved["noise_ceiling"]}))
