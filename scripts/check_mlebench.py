"""The Python half of scripts/check-mlebench.sh (see there).

    check_mlebench.py imports ROOT           every lite grader of the checkout at ROOT imports
    check_mlebench.py data ROOT DATA         synthetic prepared data and leaderboards for COMPETITIONS
    check_mlebench.py compare ROOT DATA OUT  MLE-bench's grade_csv on each kept submission of the eval
                                             node's outputs OUT, field by field against our reports

The data follow the layouts the competitions' own prepare scripts write
(file names, columns, id columns); the values are random but fixed.
Leaderboards are written in Kaggle's columns, since a checkout keeps the
real ones in Git LFS.
"""

import glob
import importlib
import json
import math
import os
import sys

import numpy as np
import pandas as pd

# Chosen for their metrics and layouts: log loss over three classes, AUC with
# a sample file of its own name and a text id column, RMSE with labels.csv and
# an id column named key, AUC on a plain tabular table.
COMPETITIONS = [
    "spooky-author-identification",
    "detecting-insults-in-social-commentary",
    "new-york-city-taxi-fare-prediction",
    "tabular-playground-series-may-2022",
]
FIELDS = [
    "score",
    "gold_threshold",
    "silver_threshold",
    "bronze_threshold",
    "median_threshold",
    "any_medal",
    "gold_medal",
    "silver_medal",
    "bronze_medal",
    "above_median",
    "submission_exists",
    "valid_submission",
    "is_lower_better",
]
TOTALS = [
    "total_runs",
    "total_runs_with_submissions",
    "total_valid_submissions",
    "total_medals",
    "total_gold_medals",
    "total_silver_medals",
    "total_bronze_medals",
    "total_above_median",
]


def lite(root):
    return open(os.path.join(root, "experiments", "splits", "low.txt")).read().split()


def imports(root):
    import yaml

    sys.path.insert(0, root)
    failed = 0
    ids = lite(root)
    for c in ids:
        cfg = yaml.safe_load(open(os.path.join(root, "mlebench", "competitions", c, "config.yaml")))
        module, _, fn = cfg["grader"]["grade_fn"].partition(":")
        try:
            getattr(importlib.import_module(module), fn)
        except Exception as e:  # each failure is reported
            failed += 1
            print(f"  {c}: {type(e).__name__}: {e}")
    print(f"graders: {len(ids)} lite graders, {failed} fail to import with {sys.executable}")
    return failed


def words(rng, n, vocab):
    return " ".join(rng.choice(vocab, n))


def write(path, df):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    df.to_csv(path, index=False)


def spooky(rng, pub, priv):
    classes = ["EAP", "HPL", "MWS"]
    vocab = {c: [f"{c.lower()}{k}" for k in range(12)] + ["the", "of", "and"] for c in classes}

    def table(n, start):
        author = rng.choice(classes, n)
        return pd.DataFrame(
            {
                "id": [f"id{start + i:05d}" for i in range(n)],
                "text": [words(rng, 12, vocab[a]) for a in author],
                "author": author,
            }
        )

    train, test = table(300, 0), table(100, 50000)
    write(f"{pub}/train.csv", train)
    write(f"{pub}/test.csv", test.drop(columns=["author"]))
    onehot = pd.DataFrame({"id": test["id"], **{c: (test["author"] == c).astype(int) for c in classes}})
    write(f"{priv}/test.csv", onehot)
    write(
        f"{pub}/sample_submission.csv",
        onehot.assign(EAP=0.403493538995863, HPL=0.287808366106543, MWS=0.308698094897594),
    )


def insults(rng, pub, priv):
    nice, rude = ["thanks", "great", "point", "agree", "good"], ["idiot", "stupid", "moron", "loser", "dumb"]

    def table(n, tag):
        y = rng.integers(0, 2, n)
        comment = [f'"{tag}{i} ' + words(rng, 8, rude if v else nice) + '"' for i, v in enumerate(y)]
        date = [f"2012061{rng.integers(0, 10)}1{rng.integers(10, 60)}00Z" if rng.random() > 0.2 else None for _ in y]
        return pd.DataFrame({"Insult": y, "Date": date, "Comment": comment})

    train, test = table(300, "tr"), table(100, "te")
    write(f"{pub}/train.csv", train)
    write(f"{priv}/test.csv", test.assign(Usage="PrivateTest"))
    write(f"{priv}/gold_submission.csv", test)
    write(f"{pub}/test.csv", test.drop(columns=["Insult"]))
    write(f"{pub}/sample_submission_null.csv", test.assign(Insult=0))


def taxi(rng, pub, priv):
    def table(n, start):
        lon, lat = rng.uniform(-74.05, -73.75, n), rng.uniform(40.6, 40.85, n)
        lon2, lat2 = lon + rng.normal(0, 0.03, n), lat + rng.normal(0, 0.03, n)
        when = [f"2013-0{1 + i % 9}-1{i % 10} 1{i % 10}:00:00 UTC" for i in range(start, start + n)]
        fare = 2.5 + 120 * np.hypot(lon2 - lon, lat2 - lat) + rng.normal(0, 1, n)
        return pd.DataFrame(
            {
                "key": [f"{w[:19]}.{i:07d}" for i, w in zip(range(start, start + n), when)],
                "fare_amount": fare.round(2),
                "pickup_datetime": when,
                "pickup_longitude": lon,
                "pickup_latitude": lat,
                "dropoff_longitude": lon2,
                "dropoff_latitude": lat2,
                "passenger_count": rng.integers(1, 6, n),
            }
        )

    train, test = table(400, 0), table(120, 900000)
    write(f"{pub}/labels.csv", train)
    write(f"{pub}/test.csv", test.drop(columns=["fare_amount"]))
    write(f"{pub}/sample_submission.csv", test[["key"]].assign(fare_amount=11.35))
    write(f"{priv}/test.csv", test)


def tabular(rng, pub, priv):
    def table(n, start):
        x = rng.normal(size=(n, 6))
        df = pd.DataFrame(
            {
                "id": range(start, start + n),
                **{f"f_{k:02d}": x[:, k] for k in range(6)},
                "f_27": ["".join(rng.choice(list("ABC"), 4)) for _ in range(n)],
            }
        )
        df["target"] = (x[:, 0] + 0.5 * x[:, 1] + rng.normal(0, 0.5, n) > 0).astype(int)
        return df

    train, test = table(400, 0), table(150, 400)
    write(f"{pub}/train.csv", train)
    write(f"{pub}/test.csv", test.drop(columns=["target"]))
    write(f"{pub}/sample_submission.csv", test[["id"]].assign(target=0.5))
    write(f"{priv}/test.csv", test[["id", "target"]])
    write(f"{priv}/gold_submission.csv", test[["id", "target"]])


MAKERS = dict(zip(COMPETITIONS, [spooky, insults, taxi, tabular]))
# Scores a spread of teams might reach: (best, worst).
SPREAD = {
    COMPETITIONS[0]: (0.15, 1.1),
    COMPETITIONS[1]: (0.96, 0.5),
    COMPETITIONS[2]: (1.5, 9.0),
    COMPETITIONS[3]: (0.99, 0.6),
}


def data(root, out):
    rng = np.random.default_rng(25)
    for i, c in enumerate(COMPETITIONS):
        base = os.path.join(out, c, "prepared")
        MAKERS[c](np.random.default_rng(100 + i), f"{base}/public", f"{base}/private")
        desc = os.path.join(root, "mlebench", "competitions", c, "description.md")
        with open(desc) as f, open(f"{base}/public/description.md", "w") as g:
            g.write(f.read())
        best, worst = SPREAD[c]
        teams = [60, 180, 600, 1500][i]
        scores = np.sort(rng.uniform(min(best, worst), max(best, worst), teams))
        scores = scores if best < worst else scores[::-1]
        lb = pd.DataFrame(
            {
                "scoreNullable": scores.round(5),
                "teamId": range(1, teams + 1),
                "hasTeamName": True,
                "submissionDate": "2020-01-01 00:00:00",
                "score": scores.round(5),
                "hasScore": True,
            }
        )
        lb.to_csv(os.path.join(root, "mlebench", "competitions", c, "leaderboard.csv"), index=False)
    print(f"data: {len(COMPETITIONS)} competitions in {out}")


def same(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def compare(root, data_dir, outputs):
    sys.path.insert(0, root)
    from pathlib import Path

    from mlebench.grade import aggregate_reports, grade_csv
    from mlebench.registry import Registry

    registry = Registry(Path(data_dir))
    runs = fields = mismatches = 0
    for report in sorted(glob.glob(os.path.join(outputs, "mlebench", "*_grading_report.json"))):
        ours = json.load(open(report))
        theirs = []
        for r in ours["competition_reports"]:
            graded = grade_csv(Path(outputs) / r["submission_path"], registry.get_competition(r["competition_id"]))
            theirs.append(graded)
            ref = graded.to_dict()
            runs += 1
            for k in FIELDS:
                fields += 1
                if not same(r[k], ref[k]):
                    mismatches += 1
                    print(
                        f"  {os.path.basename(report)} {r['competition_id']} {k}: ours {r[k]!r}, MLE-bench {ref[k]!r}"
                    )
        agg = aggregate_reports(theirs)
        for k in TOTALS:
            fields += 1
            if ours[k] != agg[k]:
                mismatches += 1
                print(f"  {os.path.basename(report)} {k}: ours {ours[k]}, MLE-bench {agg[k]}")
    valid = sum(
        json.load(open(p))["total_valid_submissions"]
        for p in glob.glob(os.path.join(outputs, "mlebench", "*_grading_report.json"))
    )
    print(
        f"compare: {len(COMPETITIONS)} competitions, {runs} runs ({valid} valid submissions), {fields} fields compared, {mismatches} mismatches"
    )
    return mismatches


if __name__ == "__main__":
    cmd, *rest = sys.argv[1:]
    bad = {"imports": imports, "data": data, "compare": compare}[cmd](*rest)
    sys.exit(1 if bad else 0)
