// The pieces of an MLE-bench checkout that mlepipe's grader calls, in the
// shapes the real ones have (scripts/check-mlebench.sh checks them against a
// real checkout): utils' readers take a pathlib.Path (load_answers reads its
// suffix, so a string fails as it does there), a Grader is built from
// config.yaml's name and grade_fn and holds the imported function, and graders
// raise grade_helpers.InvalidSubmissionError for a bad submission.
export const MLEBENCH_MIRROR: Record<string, string> = {
  'mlebench/__init__.py': '',
  'mlebench/competitions/__init__.py': '',
  'mlebench/utils.py': `import importlib

import pandas as pd


def read_csv(*args, **kwargs):
    return pd.read_csv(*args, **{"float_precision": "round_trip", **kwargs})


def load_answers(path_to_answers):
    if path_to_answers.suffix == ".csv":
        return read_csv(path_to_answers)
    raise ValueError(f"answers must be a CSV here: {path_to_answers}")


def import_fn(fn_import_string):
    module_name, fn_name = fn_import_string.split(":")
    return getattr(importlib.import_module(module_name), fn_name)
`,
  'mlebench/grade_helpers.py': `from mlebench.utils import import_fn


class InvalidSubmissionError(Exception):
    pass


class Grader:
    def __init__(self, name, grade_fn):
        self.name = name
        self.grade_fn = import_fn(grade_fn)
        assert isinstance(self.name, str) and self.name
`,
};

/** The mirror under a folder of the project (the checkout's root). */
export function mirrorAt(root: string): Record<string, string> {
  return Object.fromEntries(Object.entries(MLEBENCH_MIRROR).map(([k, v]) => [`${root}/${k}`, v]));
}
