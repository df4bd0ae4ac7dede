"""An MLE-bench competition's evaluator in the task contract (docs/tasks.md).

The competition's grader is built and called the way MLE-bench's own
grading does it: a `Grader` from config.yaml's name and grade_fn, the
submission read with MLE-bench's `read_csv`, the answers with its
`load_answers` (both take a `pathlib.Path`), the score rounded to 5
decimals. The thresholds come from its leaderboard (threshold.json, computed
by mlepipe with MLE-bench's rule). mlebench.json says where the checkout is
and which grader, answers and sample submission to use.

What the agent may see is the grader's own message about the submission,
never a traceback (that goes to stderr, for the log). A grader that cannot
be imported, or that raises on this submission something other than
MLE-bench's InvalidSubmissionError while the sample submission grades badly
too, is a fault of the grader rather than the submission: the answer then
carries "fault": "grader" and a detail for the run's record.
"""

import argparse
import json
import math
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent


def answer(obj):
    print(json.dumps(obj))
    sys.exit(0)


def invalid(message):
    answer({"error": f"Submission invalid: {message}"})


def fault(message, detail):
    answer({"error": f"Submission invalid: {message}", "fault": "grader", "detail": detail})


def main():
    with open(HERE / "mlebench.json") as f:
        cfg = json.load(f)
    sample = HERE.parent / "public" / cfg.get("sample_submission", "sample_submission.csv")
    parser = argparse.ArgumentParser()
    parser.add_argument("--submission_path", default=str(sample))
    args = parser.parse_args()
    with open(HERE / "threshold.json") as f:
        thresholds = json.load(f)
    sys.path.insert(0, cfg["mlebench_root"])
    try:
        from mlebench.grade_helpers import Grader, InvalidSubmissionError
        from mlebench.utils import load_answers, read_csv

        grader = Grader(cfg.get("grader_name") or cfg["grade_fn"], cfg["grade_fn"])
        answers = load_answers(HERE / cfg["answers"])
    except Exception as e:  # whatever stops the grader loading is the grader's fault
        traceback.print_exc()
        fault(
            "the competition's grader could not be loaded", f"{cfg['grade_fn']} does not load: {type(e).__name__}: {e}"
        )

    path = Path(args.submission_path)
    if not path.is_file() or path.suffix.lower() != ".csv":
        invalid(f"{path.name} is not a CSV file")
    try:
        submission = read_csv(path)
    except Exception as e:  # an unreadable file is an invalid submission
        invalid(f"the submission is not a readable CSV: {e}")
    try:
        score = grader.grade_fn(submission, answers)
    except InvalidSubmissionError as e:
        invalid(e)
    except Exception as e:  # sorted out below
        traceback.print_exc()
        # Graders also check submissions with assert and pandas errors. When the
        # sample submission grades, the grader works and the fault is this file's.
        if path.resolve() != sample.resolve() and sample_grades(grader, read_csv, sample, answers):
            invalid(e)
        fault(e, f"{cfg['grade_fn']} raised {type(e).__name__}: {e}")
    if score is None:
        invalid("the grader gave no score")
    score = round(float(score), 5)
    # MLE-bench counts any score a grader returns as a valid submission, infinity and NaN too
    # (grade_csv: valid_submission = score is not None). JSON has neither, so they travel as text.
    if not math.isfinite(score):
        score = "nan" if math.isnan(score) else ("inf" if score > 0 else "-inf")
    answer({"score": score, **thresholds, "is_lower_better": cfg["is_lower_better"]})


def sample_grades(grader, read_csv, sample, answers):
    try:
        grader.grade_fn(read_csv(sample), answers)
        return True
    except Exception:  # any failure means the grader is broken here
        return False


if __name__ == "__main__":
    main()
