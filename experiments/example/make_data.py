"""Synthetic regression data with a non-linear hidden rule (a tiny stand-in task)."""

import json
import os
import sys

import numpy as np

params = json.loads(os.environ.get("MLEPIPE_PARAMS", "{}"))
out = os.environ["MLEPIPE_OUT"]
rng = np.random.default_rng(int(params.get("seed", 0)))
n = int(params.get("n", 200))
X = rng.normal(size=(n, 4))
y = 2 * X[:, 0] - X[:, 1] + np.sin(3 * X[:, 2]) + 0.5 * X[:, 0] * X[:, 3] + rng.normal(scale=0.3, size=n)
cut = int(n * 0.8)
header = "x0,x1,x2,x3,y"
np.savetxt(os.path.join(out, "train.csv"), np.c_[X[:cut], y[:cut]], delimiter=",", header=header, comments="")
np.savetxt(os.path.join(out, "test.csv"), np.c_[X[cut:], y[cut:]], delimiter=",", header=header, comments="")
json.dump({"n_train": cut, "n_test": n - cut}, open(os.path.join(out, "metrics.json"), "w"))
print(f"wrote {cut} train and {n - cut} test rows", file=sys.stderr)
