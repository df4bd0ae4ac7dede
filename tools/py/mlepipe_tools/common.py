"""What every diagnostic tool shares: the registry, reading files, and the answer shape."""

import math
import os
import re
from typing import Any, Callable

import numpy as np
import pandas as pd

# Tool name -> the function that answers it (called with the parsed arguments).
TOOLS: dict[str, Callable[..., Any]] = {}


class ToolError(Exception):
    """A problem with the call itself (a missing file, a column that is not there); shown to the agent as is."""


def tool(name):
    def register(fn):
        TOOLS[name] = fn
        return fn

    return register


def answer(text, **evidence):
    return {"text": text, "evidence": evidence}


def workspace_path(path):
    """The file a call names, refused when it lies outside the workspace and public/ (which is a link
    to the task's public files where there is no jail, so it is a root of its own)."""
    cwd = os.getcwd()
    roots = {os.path.realpath(cwd), os.path.realpath(os.path.join(cwd, "public"))}
    full = os.path.realpath(os.path.join(cwd, path))
    if not any(full == r or full.startswith(r + os.sep) for r in roots):
        raise ToolError(f"{path}: outside the workspace; tools read only the workspace and public/")
    if not os.path.exists(full):
        raise ToolError(f"{path}: no such file")
    return full


def read_text(path):
    with open(workspace_path(path), encoding="utf-8", errors="replace") as f:
        return f.read()


def read_table(path, max_rows=None):
    full = workspace_path(path)
    if full.endswith(".parquet"):
        df = pd.read_parquet(full)
    elif full.endswith((".jsonl", ".ndjson")):
        df = pd.read_json(full, lines=True)
    elif full.endswith(".tsv"):
        df = pd.read_csv(full, sep="\t")
    else:
        df = pd.read_csv(full)
    return df.head(max_rows) if max_rows else df


def need_columns(df, cols, path):
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise ToolError(
            f"{path}: no column {', '.join(map(repr, missing))} (columns: {', '.join(map(str, df.columns[:30]))})"
        )


def feature_frame(df, target=None, exclude=()):
    drop = [c for c in [target, *exclude] if c is not None and c in df.columns]
    return df.drop(columns=drop)


def numeric_columns(df):
    return [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])]


def is_text(s):
    """A column of strings under any pandas string dtype: `str`/StringDtype (pandas 3's default for text)
    or object columns whose values are strings (older pandas, JSON records)."""
    if pd.api.types.is_string_dtype(s):
        return True
    return pd.api.types.is_object_dtype(s) and pd.api.types.infer_dtype(s, skipna=True) == "string"


def text_columns(df):
    return [c for c in df.columns if is_text(df[c])]


def categorical_columns(df):
    return [c for c in df.columns if c not in numeric_columns(df) and not pd.api.types.is_datetime64_any_dtype(df[c])]


def rnd(x, digits=4):
    """A number fit for JSON: rounded, and None for NaN or infinity."""
    if x is None:
        return None
    x = float(x)
    if not math.isfinite(x):
        return None
    return round(x, digits)


# `loss=0.31`, `val_acc: 0.9`, `step 12`: a metric name followed by a number.
METRIC_RE = re.compile(
    r"([A-Za-z][A-Za-z0-9_./-]*)\s*[:=]\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf)", re.IGNORECASE
)
STEP_NAMES = ("step", "global_step", "iter", "iteration", "epoch")


def metric_records(text):
    """Every (line number, {name: value}) in a log, JSON lines included."""
    import json

    out = []
    for i, line in enumerate(text.splitlines()):
        found = {}
        s = line.strip()
        if s.startswith("{") and s.endswith("}"):
            try:
                obj = json.loads(s)
                found = {k: float(v) for k, v in obj.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            except ValueError:
                found = {}
        if not found:
            for name, value in METRIC_RE.findall(line):
                found[name] = float(value)
            # `Epoch 3` / `step 120` without a separator.
            for m in re.finditer(r"\b(epoch|step|iter(?:ation)?)\s+(\d+)\b", line, re.IGNORECASE):
                if m.group(1).lower() not in {k.lower() for k in found}:
                    found[m.group(1).lower()] = float(m.group(2))
        if found:
            out.append((i + 1, found))
    return out


def load_series(path, column=None, metric=None):
    """A 1-D series: a table's column (default: its last numeric one) or a metric taken from a log."""
    if metric is not None or not path.endswith((".csv", ".tsv", ".parquet", ".jsonl")):
        records = metric_records(read_text(path))
        names = sorted({k for _, r in records for k in r})
        if metric is None:
            raise ToolError(f"{path}: name the metric to read (found: {', '.join(names) or 'none'})")
        values = [r[metric] for _, r in records if metric in r]
        if not values:
            raise ToolError(f"{path}: no metric {metric!r} (found: {', '.join(names) or 'none'})")
        return np.asarray(values, dtype=float), metric
    df = read_table(path)
    if column is None:
        nums = numeric_columns(df)
        if not nums:
            raise ToolError(f"{path}: no numeric column")
        column = nums[-1]
    need_columns(df, [column], path)
    return pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float), column


def finite(x, name):
    y = x[np.isfinite(x)]
    if len(y) < 3:
        raise ToolError(f"{name}: fewer than 3 finite values")
    return y
