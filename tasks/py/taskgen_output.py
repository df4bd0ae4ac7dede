# Part of generate_task_env.py (see taskgen_core.py); concatenated in the order of TASKGEN_PARTS.
import json
import os

import numpy as np
import pandas as pd


# --- reference teams (Operation 3; thresholds from their leaderboard) ----------


def text_matrix(train_text, test_text):
    """TF-IDF of words and word pairs and of character n-grams (which survive typos), raw word counts and the
    length: a field of teams reads texts several ways, and counts keep how often a cue occurs, which
    TF-IDF's normalization blurs."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

    tfidf = TfidfVectorizer(ngram_range=(1, 2), min_df=1).fit(train_text)
    chars = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 4), min_df=2).fit(train_text)
    counts = CountVectorizer().fit(train_text)

    def rows(texts):
        n_words = np.array([[len(str(t).split())] for t in texts], float)
        parts = [tfidf.transform(texts), chars.transform(texts), counts.transform(texts).astype(float)]
        return np.hstack([p.toarray() for p in parts] + [n_words])

    return rows(train_text), rows(test_text)


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


# --- files ---------------------------------------------------------------------


def class_names(spec):
    return [str(c) for c in spec["target"].get("classes", [])]


def submission_frames(spec, ids, y_values, rng):
    """answer.csv and sample_submission.csv (same columns): labels, probabilities or values."""
    tname = spec["target"]["name"]
    metric = spec["metric"]
    if spec["target"]["kind"] == "regression":
        lo, hi = float(np.nanmin(y_values)), float(np.nanmax(y_values))
        return (
            pd.DataFrame({"id": ids, tname: np.round(y_values, 6)}),
            pd.DataFrame({"id": ids, tname: np.round(rng.uniform(lo, hi, len(ids)), 6)}),
        )
    names = class_names(spec)
    k = len(names)
    y_values = np.asarray(y_values, int)
    if metric in ("roc_auc", "log_loss"):
        if k == 2:
            return (
                pd.DataFrame({"id": ids, tname: y_values.astype(float)}),
                pd.DataFrame({"id": ids, tname: np.full(len(ids), 0.5)}),
            )
        onehot = np.eye(k)[y_values]
        ans = pd.DataFrame({"id": ids, **{names[j]: onehot[:, j] for j in range(k)}})
        sample = pd.DataFrame({"id": ids, **{names[j]: np.full(len(ids), round(1.0 / k, 6)) for j in range(k)}})
        return ans, sample
    labels = np.asarray(names, dtype=object)
    return (
        pd.DataFrame({"id": ids, tname: labels[y_values]}),
        pd.DataFrame({"id": ids, tname: labels[rng.integers(0, k, len(ids))]}),
    )


def main(spec, out):
    kind = spec["generator"]
    ntr = spec["n_train"]
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

    # Reference teams see only what an agent sees (public features, public labels). Their submissions go to
    # teams/ beside public/ and private/; the factory grades them with the task's evaluator, ranks them into
    # private/leaderboard.csv and freezes threshold.json from it by MLE-bench's rule.
    if kind == "time-series-forecasting":
        preds = series_team_predictions(train, y_train_public.astype(float), test)
    else:
        if kind == "text-classification":
            x_tr, x_te = text_matrix(train["text"], test["text"])
        elif extra is not None:
            x_tr, x_te = extra[:ntr], extra[ntr:]
        else:
            x_tr, x_te = design_matrix(train, test)
        yt = y_train_public.astype(float) if spec["target"]["kind"] == "regression" else y_train_public.astype(int)
        preds = team_predictions(spec, x_tr, yt, x_te)
    teams = write_teams(spec, os.path.join(out, "teams"), ids[ntr:], preds)
    if spec["metric"] in ("roc_auc", "log_loss"):
        k = len(names)
        oracle_pred = np.full((len(oracle_test), k), 0.1 / max(1, k - 1))
        oracle_pred[np.arange(len(oracle_test)), np.asarray(oracle_test, int)] = 0.9
    else:
        oracle_pred = oracle_test
    oracle_score = score(spec, y_test, oracle_pred)
    resolved = dict(spec)
    resolved["hidden_rule"] = rule
    resolved["reference_teams"] = teams
    resolved["noise_ceiling"] = round(float(oracle_score), 6)
    # The prior team is the starter baseline MLToolBench's success measure compares against.
    resolved["starter_score"] = round(float(score(spec, y_test, preds["prior"])), 6)
    resolved["threshold_logic"] = "MLE-bench's rule on the leaderboard of the reference teams (private/leaderboard.csv)"
    with open(os.path.join(priv, "spec.json"), "w") as f:
        json.dump(resolved, f, indent=2, sort_keys=True, default=float)
        f.write("\n")
    print(json.dumps({"ok": True, "teams": len(teams), "noise_ceiling": resolved["noise_ceiling"]}))
