"""Grades each generated task's answers, sample submission and a set of malformed
submissions with the task's own evaluator, all tasks in one process (numpy and
pandas are imported once). Prints one JSON line per task folder given, in order;
a task whose check raised has {"error": ...} instead, and the exit status is then 1."""

import contextlib
import importlib.util
import io
import json
import os
import sys
import tempfile
import traceback

import numpy as np
import pandas as pd


def check(task):
    spec = importlib.util.spec_from_file_location("task_evaluator", os.path.join(task, "private", "evaluator.py"))
    ev = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ev)

    def grade(path):
        out = io.StringIO()
        old = sys.argv
        sys.argv = ["evaluator.py", "--submission_path", path]
        try:
            with contextlib.redirect_stdout(out):
                ev.main()
        finally:
            sys.argv = old
        lines = out.getvalue().strip().split("\n")
        assert len(lines) == 1, lines
        return json.loads(lines[0])

    tmp = tempfile.mkdtemp()
    answer = pd.read_csv(os.path.join(task, "private", "answer.csv"), dtype={"id": str})
    cols = [c for c in answer.columns if c != "id"]
    label = ev.CONFIG["kind"] == "label"

    def write(name, df=None, text=None):
        p = os.path.join(tmp, name + ".csv")
        if text is not None:
            open(p, "w").write(text)
        else:
            df.to_csv(p, index=False)
        return p

    def variant(fn):
        d = answer.copy()
        fn(d)
        return d

    def set_first(value):
        def f(d):
            d[cols[0]] = d[cols[0]].astype(object)
            d.loc[0, cols[0]] = value

        return f

    malformed = {
        "missing_file": os.path.join(tmp, "nope.csv"),
        "empty_file": write("empty", text=""),
        "header_only": write("header", text=",".join(answer.columns) + "\n"),
        "not_csv": write("garbage", text='id,"unterminated\n1,2\n'),
        "wrong_column": write("wrongcol", answer.rename(columns={cols[0]: cols[0] + "_x"})),
        "extra_column": write("extracol", variant(lambda d: d.__setitem__("extra", 1))),
        "missing_ids": write("missing", answer.iloc[:-1]),
        "duplicate_ids": write("dup", pd.concat([answer, answer.iloc[:1]])),
        "unknown_ids": write("unknown", variant(lambda d: d.__setitem__("id", ["zzz-unknown"] + list(d["id"][1:])))),
        "nan_value": write("nan", variant(set_first(np.nan))),
        "wrong_type": write("type", variant(set_first("not-a-valid-value"))),
    }
    if not label:
        malformed["inf_value"] = write("inf", variant(set_first(np.inf)))
    return {
        "answer": grade(os.path.join(task, "private", "answer.csv")),
        "sample": grade(os.path.join(task, "public", "sample_submission.csv")),
        "malformed": {k: grade(v) for k, v in malformed.items()},
    }


failed = 0
for task in sys.argv[1:]:
    try:
        result = check(task)
    except Exception:
        result = {"error": traceback.format_exc()}
        failed += 1
    print(json.dumps(result), flush=True)
sys.exit(1 if failed else 0)
