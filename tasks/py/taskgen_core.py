# Procedural task generation (the ML Developer as code). Given a concrete
# spec from the Data Strategist, it draws the hidden rule l = f(z) + eps,
# synthesizes the micro-scale dataset for one of seven task kinds, applies the
# adversarial mutations, writes public/ and private/ files, trains the
# baselines and freezes the milestone thresholds. Everything is seeded from
# the spec, so the same spec gives the same bytes. generate_task_env.py is
# metrics.py and the taskgen_*.py parts (this one first, taskgen_output.py
# last) with the spec appended, run in the sandbox.
import json
import math
import os
import wave

import numpy as np
import pandas as pd

# --- helpers -----------------------------------------------------------------


def rng_for(spec, salt):
    return np.random.default_rng([int(spec["seed"]), int(salt)])


def write_csv(df, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    df.to_csv(path, index=False, float_format="%.6g", lineterminator="\n")


def quantile_classes(f, k, rng, imbalance):
    """Cuts a score into k classes; imbalance > 0 makes the top classes rarer (long tail)."""
    weights = np.array([(1.0 - imbalance) ** i for i in range(k)])
    cum = np.cumsum(weights / weights.sum())[:-1]
    cuts = np.quantile(f, cum)
    return np.searchsorted(cuts, f), cuts


def standardize(x):
    x = np.asarray(x, float)
    s = x.std()
    return (x - x.mean()) / (s if s > 0 else 1.0)


def mutation(spec, name):
    for m in spec.get("mutations", []):
        if m["name"] == name:
            return m.get("params", {})
    return None


# --- hidden rule over latent variables z (shared by all modalities) ----------


def draw_rule(rng, d, n_cat_levels=0):
    """A genuinely non-linear rule: sparse linear part, interactions, a threshold, a periodic term, categorical effects."""
    active = rng.choice(d, size=min(d, max(2, d // 2)), replace=False)
    rule = {
        "linear": {int(i): float(rng.choice([-1, 1]) * rng.uniform(0.6, 1.4)) for i in active},
        "interactions": [
            [int(a), int(b), float(rng.choice([-1, 1]) * rng.uniform(0.5, 1.0))]
            for a, b in (rng.choice(d, 2, replace=False) for _ in range(2))
        ]
        if d >= 2
        else [],
        "threshold": {
            "feature": int(rng.integers(d)),
            "at": float(rng.uniform(-0.5, 0.5)),
            "jump": float(rng.uniform(1.0, 2.0)),
        },
        "periodic": {
            "feature": int(rng.integers(d)),
            "freq": float(rng.uniform(1.5, 3.0)),
            "amp": float(rng.uniform(0.6, 1.2)),
        },
        "categorical": [float(x) for x in rng.normal(0, 1.0, n_cat_levels)] if n_cat_levels else [],
    }
    return rule


def apply_rule(rule, z, cat=None):
    f = np.zeros(len(z))
    for i, w in rule["linear"].items():
        f += w * z[:, int(i)]
    for a, b, w in rule["interactions"]:
        f += w * z[:, a] * z[:, b]
    t = rule["threshold"]
    f += t["jump"] * (z[:, t["feature"]] > t["at"])
    p = rule["periodic"]
    f += p["amp"] * np.sin(p["freq"] * z[:, p["feature"]])
    if cat is not None and rule["categorical"]:
        f += np.asarray(rule["categorical"])[cat]
    return f


def labels_from(spec, rng, f_clean, noise):
    """Classification labels (indices) or regression targets from the rule, plus the noiseless oracle."""
    f = f_clean + rng.normal(0, noise, len(f_clean))
    t = spec["target"]
    if t["kind"] == "regression":
        scale = float(t.get("scale", 1.0))
        offset = float(t.get("offset", 0.0))
        return f * scale + offset, f_clean * scale + offset
    imb = mutation(spec, "imbalance")
    k = len(t["classes"])
    y, cuts = quantile_classes(f, k, rng, (imb or {}).get("ratio", 0.0) if imb else 0.0)
    return y, np.searchsorted(cuts, f_clean)
