"""Tabular data diagnostics: one function per tool, each returning measurements and a short reading."""

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.feature_selection import mutual_info_classif, mutual_info_regression

from .common import (
    ToolError,
    answer,
    categorical_columns,
    feature_frame,
    need_columns,
    numeric_columns,
    read_table,
    rnd,
    tool,
)


@tool("detect_missing_values")
def detect_missing_values(path):
    df = read_table(path)
    cols = []
    for c in df.columns:
        frac = float(df[c].isna().mean())
        if frac == 0:
            continue
        num = c in numeric_columns(df)
        # Mostly empty columns carry little; a moderate share is worth an indicator, since missingness itself can predict.
        if frac > 0.6:
            how = "drop the column"
        elif frac > 0.05:
            how = ("median" if num else "most-frequent") + " imputation plus a missing-indicator column"
        else:
            how = "median imputation" if num else "most-frequent imputation"
        cols.append({"column": c, "missing": int(df[c].isna().sum()), "fraction": rnd(frac), "suggestion": how})
    cols.sort(key=lambda r: -r["fraction"])
    text = f"{len(cols)} of {df.shape[1]} columns have missing values" + "".join(
        f"; {r['column']}: {r['fraction']:.1%} ({r['suggestion']})" for r in cols[:8]
    )
    return answer(text, rows=len(df), columns=cols, rows_with_missing=int(df.isna().any(axis=1).sum()))


def column_kind(s, n):
    if pd.api.types.is_bool_dtype(s) or s.nunique(dropna=True) == 2:
        return "binary"
    if pd.api.types.is_numeric_dtype(s):
        return "numeric"
    parsed = pd.to_datetime(s.dropna().astype(str).head(200), errors="coerce", format="mixed")
    if (
        len(parsed)
        and parsed.notna().mean() > 0.9
        and s.astype(str).str.contains(r"\d[-/:]\d", regex=True).mean() > 0.9
    ):
        return "datetime"
    if s.dropna().astype(str).str.split().str.len().mean() > 3:
        return "text"
    return "categorical"


def id_like(name, s, kind):
    """Every value distinct, and integers or strings (a float that never repeats is just a measurement)."""
    uniq = s.nunique(dropna=True)
    return bool(
        uniq == s.notna().sum()
        and len(s) > 20
        and kind in ("numeric", "categorical")
        and (not pd.api.types.is_float_dtype(s) or "id" in str(name).lower())
    )


@tool("identify_feature_types")
def identify_feature_types(path, high_cardinality=50):
    df = read_table(path)
    n = len(df)
    out = []
    for c in df.columns:
        s = df[c]
        uniq = int(s.nunique(dropna=True))
        kind = column_kind(s, n)
        is_id = id_like(c, s, kind)
        out.append(
            {
                "column": c,
                "type": kind,
                "dtype": str(s.dtype),
                "unique": uniq,
                "id_like": bool(is_id),
                "high_cardinality": bool(kind == "categorical" and uniq > high_cardinality),
            }
        )
    counts = pd.Series([r["type"] for r in out]).value_counts().to_dict()
    ids = [r["column"] for r in out if r["id_like"]]
    text = ", ".join(f"{v} {k}" for k, v in counts.items()) + (
        f"; ID-like (drop before training): {', '.join(map(str, ids))}" if ids else ""
    )
    return answer(text, rows=n, columns=out)


@tool("detect_label_imbalance")
def detect_label_imbalance(path, target):
    df = read_table(path)
    need_columns(df, [target], path)
    counts = df[target].value_counts(dropna=False)
    ratio = float(counts.iloc[0] / counts.iloc[-1])
    if ratio >= 5:
        how = "strong imbalance: class weights or resampling (over-sample the minority), and a metric that is not accuracy"
    elif ratio >= 2:
        how = "moderate imbalance: class weights, stratified splits"
    else:
        how = "balanced enough: no resampling needed"
    classes = [{"label": str(k), "count": int(v), "fraction": rnd(v / len(df))} for k, v in counts.items()]
    text = f"{len(counts)} classes, majority/minority ratio {ratio:.2f} ({how})"
    return answer(text, classes=classes, imbalance_ratio=rnd(ratio), suggestion=how)


@tool("check_feature_normalization")
def check_feature_normalization(path, target=None):
    df = feature_frame(read_table(path), target)
    cols = []
    for c in numeric_columns(df):
        s = df[c].dropna()
        if s.empty:
            continue
        cols.append({"column": c, "min": rnd(s.min()), "max": rnd(s.max()), "mean": rnd(s.mean()), "std": rnd(s.std())})
    stds = [r["std"] for r in cols if r["std"]]
    spread = max(stds) / min(stds) if stds else 1.0
    scaled = all(abs(r["mean"] or 0) < 0.1 and abs((r["std"] or 0) - 1) < 0.1 for r in cols)
    if scaled:
        how = "already standardized"
    elif spread > 100:
        how = "scales differ by orders of magnitude: standardize (fit the scaler on training data only) before linear, distance or neural models"
    else:
        how = "scales are comparable; scaling matters only for distance-based or neural models"
    return answer(
        f"{len(cols)} numeric columns, std ratio max/min {spread:.1f}: {how}",
        columns=cols,
        std_ratio=rnd(spread),
        suggestion=how,
    )


@tool("detect_outliers")
def detect_outliers(path, k=1.5, target=None):
    df = feature_frame(read_table(path), target)
    cols = []
    for c in numeric_columns(df):
        s = df[c].dropna()
        q1, q3 = np.percentile(s, [25, 75]) if len(s) else (0, 0)
        lo, hi = q1 - k * (q3 - q1), q3 + k * (q3 - q1)
        n = int(((s < lo) | (s > hi)).sum())
        cols.append(
            {"column": c, "outliers": n, "fraction": rnd(n / max(len(s), 1)), "lower": rnd(lo), "upper": rnd(hi)}
        )
    cols.sort(key=lambda r: -r["outliers"])
    text = (
        "; ".join(f"{r['column']}: {r['outliers']} outside [{r['lower']}, {r['upper']}]" for r in cols if r["outliers"])
        or "no IQR outliers"
    )
    return answer(text, k=k, columns=cols)


@tool("correlation_analysis")
def correlation_analysis(path, threshold=0.9, target=None):
    df = read_table(path)
    feats = feature_frame(df, target)
    nums = numeric_columns(feats)
    corr = feats[nums].corr()
    pairs = []
    for i, a in enumerate(nums):
        for b in nums[i + 1 :]:
            r = corr.loc[a, b]
            if abs(r) >= threshold:
                pairs.append({"a": a, "b": b, "r": rnd(r)})
    pairs.sort(key=lambda p: -abs(p["r"]))
    leaks = []
    if target is not None:
        need_columns(df, [target], path)
        y = (
            pd.to_numeric(df[target], errors="coerce")
            if pd.api.types.is_numeric_dtype(df[target])
            else df[target].astype("category").cat.codes
        )
        for c in nums:
            r = feats[c].corr(y)
            # A feature that tracks the label almost exactly is more likely a leak than a discovery.
            if abs(r) >= 0.98:
                leaks.append({"column": c, "r_with_target": rnd(r)})
    text = f"{len(pairs)} pairs with |r| >= {threshold}" + "".join(f"; {p['a']}~{p['b']} r={p['r']}" for p in pairs[:6])
    if leaks:
        text += "; possible target leakage: " + ", ".join(f"{l['column']} (r={l['r_with_target']})" for l in leaks)
    return answer(text, pairs=pairs, leakage_suspects=leaks, threshold=threshold)


def encoding_for(kind, uniq, n):
    if kind == "binary":
        return "binary (0/1)"
    if uniq > 0.5 * n:
        return "near-unique: treat as an ID or free text, not a category"
    if uniq <= 10:
        return "one-hot"
    if uniq <= 50:
        return "one-hot or target encoding (out-of-fold)" if n >= 20 * uniq else "target encoding (out-of-fold)"
    return "target or frequency encoding, or hashing; native categorical support in gradient boosting"


@tool("cardinality_check")
def cardinality_check(path, target=None):
    df = feature_frame(read_table(path), target)
    cols = []
    for c in categorical_columns(df):
        uniq = int(df[c].nunique(dropna=True))
        cols.append(
            {
                "column": c,
                "unique": uniq,
                "suggested_encoding": encoding_for("binary" if uniq == 2 else "categorical", uniq, len(df)),
            }
        )
    cols.sort(key=lambda r: -r["unique"])
    text = (
        "; ".join(f"{r['column']}: {r['unique']} values -> {r['suggested_encoding']}" for r in cols)
        or "no categorical columns"
    )
    return answer(text, columns=cols)


@tool("feature_skewness_checker")
def feature_skewness_checker(path, threshold=1.0, target=None):
    df = feature_frame(read_table(path), target)
    cols = []
    for c in numeric_columns(df):
        s = df[c].dropna()
        if s.nunique() < 3:
            continue
        sk = float(stats.skew(s))
        if abs(sk) < threshold:
            how = "none"
        elif sk > 0 and s.min() >= 0:
            how = "log1p"
        else:
            how = "Yeo-Johnson power transform"
        cols.append({"column": c, "skewness": rnd(sk), "suggestion": how})
    cols.sort(key=lambda r: -abs(r["skewness"]))
    skewed = [r for r in cols if r["suggestion"] != "none"]
    text = f"{len(skewed)} of {len(cols)} numeric columns have |skew| >= {threshold}" + "".join(
        f"; {r['column']}: {r['skewness']} ({r['suggestion']})" for r in skewed[:8]
    )
    return answer(text, columns=cols, threshold=threshold)


@tool("duplicate_row_detector")
def duplicate_row_detector(path, ignore=None):
    df = read_table(path)
    ignore = [ignore] if isinstance(ignore, str) else list(ignore or [])
    need_columns(df, ignore, path)
    body = df.drop(columns=ignore)
    dup = body.duplicated(keep="first")
    n = int(dup.sum())
    text = f"{n} duplicate rows of {len(df)} ({n / max(len(df), 1):.1%})" + (
        f", ignoring {', '.join(ignore)}" if ignore else ""
    )
    return answer(
        text,
        rows=len(df),
        duplicates=n,
        fraction=rnd(n / max(len(df), 1)),
        first_duplicate_rows=[int(i) for i in np.flatnonzero(dup)[:10]],
    )


@tool("detect_train_test_overlap")
def detect_train_test_overlap(train, test, columns=None, ignore=None):
    a, b = read_table(train), read_table(test)
    ignore = [ignore] if isinstance(ignore, str) else list(ignore or [])
    cols = (
        [columns]
        if isinstance(columns, str)
        else list(columns or [c for c in a.columns if c in b.columns and c not in ignore])
    )
    need_columns(a, cols, train)
    need_columns(b, cols, test)
    if not cols:
        raise ToolError("the two files share no column")
    keys = set(map(tuple, a[cols].astype(str).itertuples(index=False)))
    hit = b[cols].astype(str).apply(tuple, axis=1).isin(keys)
    n = int(hit.sum())
    text = f"{n} of {len(b)} rows of {test} ({n / max(len(b), 1):.1%}) also appear in {train} on {len(cols)} columns"
    return answer(
        text,
        columns=cols,
        overlapping_rows=n,
        fraction_of_test=rnd(n / max(len(b), 1)),
        test_rows=len(b),
        train_rows=len(a),
    )


@tool("encoding_strategy_advisor")
def encoding_strategy_advisor(path, target=None):
    df = feature_frame(read_table(path), target)
    out = []
    for c in df.columns:
        kind = column_kind(df[c], len(df))
        uniq = int(df[c].nunique(dropna=True))
        if id_like(c, df[c], kind):
            how = "ID-like: drop it (or use it only to join)"
        elif kind == "numeric":
            how = "keep numeric (scale for linear or neural models)"
        elif kind == "datetime":
            how = "expand into parts (year, month, weekday) or elapsed time"
        elif kind == "text":
            how = "TF-IDF or embeddings"
        else:
            how = encoding_for(kind, uniq, len(df))
        out.append({"column": c, "type": kind, "unique": uniq, "recommendation": how})
    return answer(
        "; ".join(f"{r['column']} ({r['type']}, {r['unique']}): {r['recommendation']}" for r in out[:15]),
        rows=len(df),
        columns=out,
    )


@tool("feature_interaction_detector")
def feature_interaction_detector(path, target, top_k=5, max_rows=3000, seed=0):
    df = read_table(path).dropna()
    need_columns(df, [target], path)
    df = df.sample(min(len(df), max_rows), random_state=seed)
    y = df[target]
    nums = numeric_columns(feature_frame(df, target))[:15]
    if len(nums) < 2:
        raise ToolError(f"{path}: fewer than two numeric features")
    classify = not pd.api.types.is_float_dtype(y) or y.nunique() <= 20
    mi = mutual_info_classif if classify else mutual_info_regression
    yv = y.astype("category").cat.codes if classify else y
    single = dict(zip(nums, mi(df[nums], yv, random_state=seed)))
    pairs = []
    for i, a in enumerate(nums):
        for b in nums[i + 1 :]:
            prod = (df[a] * df[b]).to_numpy().reshape(-1, 1)
            joint = float(mi(prod, yv, random_state=seed)[0])
            pairs.append({"a": a, "b": b, "mi_product": rnd(joint), "gain": rnd(joint - max(single[a], single[b]))})
    pairs.sort(key=lambda p: -p["gain"])
    top = pairs[:top_k]
    text = "; ".join(f"{p['a']}*{p['b']}: MI gain {p['gain']}" for p in top)
    return answer(
        text,
        single_mi={k: rnd(v) for k, v in single.items()},
        pairs=top,
        task="classification" if classify else "regression",
    )
