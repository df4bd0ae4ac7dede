# Evaluator of one generated task (the MLOps Engineer as code). It prints
# exactly one JSON object on stdout and exits 0, whatever it is given: the
# score with the frozen thresholds, or {"error": reason}. The metric code is
# inlined above this part; CONFIG is filled in for the task.
import argparse
import json
import math
import os
import sys

CONFIG = json.loads(r'''__CONFIG__''')
HERE = os.path.dirname(os.path.abspath(__file__))


class Invalid(Exception):
    pass


def load(path):
    import pandas as pd

    if not os.path.isfile(path):
        raise Invalid(f"submission file not found: {path}")
    if os.path.getsize(path) == 0:
        raise Invalid("submission file is empty")
    try:
        df = pd.read_csv(path, dtype={CONFIG["id_column"]: str}, keep_default_na=True)
    except Exception as e:
        raise Invalid(f"cannot parse the submission as CSV: {str(e).splitlines()[0]}") from None
    if len(df) == 0:
        raise Invalid("submission has a header but no rows")
    return df


def check_columns(df):
    want = CONFIG["columns"]
    got = [str(c) for c in df.columns]
    missing = [c for c in want if c not in got]
    extra = [c for c in got if c not in want]
    if missing:
        raise Invalid(f"missing column(s): {', '.join(missing)} (expected {', '.join(want)})")
    if extra:
        raise Invalid(f"unexpected column(s): {', '.join(extra)} (expected {', '.join(want)})")


def align(sub, ans):
    idc = CONFIG["id_column"]
    if sub[idc].isna().any():
        raise Invalid("some rows have no id")
    dup = sub[idc][sub[idc].duplicated()].unique().tolist()
    if dup:
        raise Invalid(f"duplicate id(s): {', '.join(map(str, dup[:5]))}")
    want, got = set(ans[idc]), set(sub[idc])
    unknown = sorted(got - want)
    if unknown:
        raise Invalid(f"unknown id(s): {', '.join(unknown[:5])}")
    missing = sorted(want - got)
    if missing:
        raise Invalid(f"missing predictions for {len(missing)} id(s), e.g. {', '.join(missing[:5])}")
    return sub.set_index(idc).loc[ans[idc]].reset_index()


def values(df, columns):
    import numpy as np

    kind = CONFIG["kind"]
    if kind == "label":
        col = columns[0]
        if df[col].isna().any():
            raise Invalid(f"missing value(s) in column {col}")
        labels = df[col].astype(str).str.strip()
        allowed = CONFIG["classes"]
        bad = sorted(set(labels) - set(allowed))
        if bad:
            raise Invalid(f"unknown label(s) in column {col}: {', '.join(bad[:5])} (allowed: {', '.join(allowed)})")
        return np.array([allowed.index(v) for v in labels])
    out = []
    for col in columns:
        try:
            v = df[col].astype(float).to_numpy()
        except (ValueError, TypeError):
            raise Invalid(f"column {col} must hold numbers") from None
        if not np.all(np.isfinite(v)):
            raise Invalid(f"column {col} has missing, NaN or infinite values")
        if kind == "prob" and (v.min() < 0 or v.max() > 1):
            raise Invalid(f"column {col} must hold probabilities in [0, 1]")
        out.append(v)
    return out[0] if len(out) == 1 else np.stack(out, axis=1)


def score_submission(path):
    """The submission's score, or Invalid; the synthetic leaderboard grades its reference teams with this
    before threshold.json exists."""
    import pandas as pd

    ans = pd.read_csv(os.path.join(HERE, "answer.csv"), dtype={CONFIG["id_column"]: str})
    sub = load(path)
    check_columns(sub)
    sub = align(sub, ans)
    cols = [c for c in CONFIG["columns"] if c != CONFIG["id_column"]]
    y = values(ans, cols)
    p = values(sub, cols)
    score = METRICS[CONFIG["metric"]](y, p)
    if not math.isfinite(score):
        raise Invalid("the metric is not finite for this submission")
    return round(float(score), 6)


def evaluate(path):
    score = score_submission(path)
    with open(os.path.join(HERE, "threshold.json")) as f:
        th = json.load(f)
    return {
        "score": score,
        "gold_threshold": th["gold_threshold"],
        "silver_threshold": th["silver_threshold"],
        "bronze_threshold": th["bronze_threshold"],
        "median_threshold": th["median_threshold"],
        "is_lower_better": CONFIG["is_lower_better"],
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--submission_path", default=os.path.join(HERE, "..", "public", "sample_submission.csv"))
    args, _ = parser.parse_known_args()
    try:
        out = evaluate(args.submission_path)
    except Invalid as e:
        out = {"error": str(e)}
    except Exception as e:  # never crash: the training loop must always get JSON
        out = {"error": f"evaluator failed: {type(e).__name__}: {e}"}
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
