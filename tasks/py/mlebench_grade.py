"""An MLE-bench competition's evaluator in the task contract (docs/tasks.md).

The competition's own grade function scores the submission against the
private answers; the thresholds come from its leaderboard (threshold.json,
computed by mlepipe with MLE-bench's rule). mlebench.json says where the
MLE-bench checkout is and which grade function and answers to use. Scores are
rounded to 5 decimals, as MLE-bench ranks them.
"""
import argparse
import importlib
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def answer(obj):
    print(json.dumps(obj))
    sys.exit(0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--submission_path", default=os.path.join(HERE, "..", "public", "sample_submission.csv"))
    args = parser.parse_args()
    with open(os.path.join(HERE, "mlebench.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(HERE, "threshold.json")) as f:
        thresholds = json.load(f)
    sys.path.insert(0, cfg["mlebench_root"])
    import pandas as pd

    # MLE-bench's own readers when the checkout has them (they fix dtypes and float parsing).
    try:
        from mlebench.utils import load_answers, read_csv
    except Exception:  # noqa: BLE001 - a checkout without its packages installed still grades with pandas
        read_csv = pd.read_csv

        def load_answers(path):
            return pd.read_csv(path) if path.endswith(".csv") else pd.read_json(path, lines=path.endswith(".jsonl"))

    module, _, name = cfg["grade_fn"].partition(":")
    # A broken grader is no verdict on the submission: let it fail loudly (non-zero exit).
    grade = getattr(importlib.import_module(module), name)
    answers = load_answers(os.path.join(HERE, cfg["answers"]))
    try:
        submission = read_csv(args.submission_path)
    except Exception as e:  # noqa: BLE001 - any unreadable file is an invalid submission
        answer({"error": f"the submission is not a readable CSV: {e}"})
    try:
        score = grade(submission, answers)
    except Exception as e:  # noqa: BLE001 - MLE-bench counts every grading failure as invalid
        answer({"error": f"{type(e).__name__}: {e}"})
    if score is None or not math.isfinite(float(score)):
        answer({"error": f"the grader gave no finite score ({score})"})
    answer({"score": round(float(score), 5), **thresholds, "is_lower_better": cfg["is_lower_better"]})


if __name__ == "__main__":
    main()
