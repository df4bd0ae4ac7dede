"""What an AIDE prompt shows of the competition's files and of the Python it runs in, computed inside the jail.

Prints one JSON object: `preview` (a tree of public/ with each file's size, then what each table, JSON file and
short text file holds; a shorter form when the detailed one passes 6000 characters) and `packages` (the
distributions installed in this interpreter).
"""

import json
import os
import sys
from importlib import metadata

ROOT = "public"
TEXT = {".txt", ".csv", ".tsv", ".json", ".md", ".py", ".sh", ".yaml", ".yml", ".html", ".xml", ".log", ".rst"}
FENCED = {".md", ".py", ".sh", ".yaml", ".yml", ".html", ".xml", ".log", ".rst"}
LIMIT = 6000


def human_bytes(n):
    for unit in ("Bytes", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n} {unit}" if unit == "Bytes" else f"{n:.1f} {unit}"
        n /= 1000.0


def count_lines(path):
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def size_text(path):
    ext = os.path.splitext(path)[1]
    return f"{count_lines(path)} lines" if ext in TEXT else human_bytes(os.path.getsize(path))


def tree(path, depth=0):
    entries = sorted(os.listdir(path))
    files = [e for e in entries if not os.path.isdir(os.path.join(path, e))]
    dirs = [e for e in entries if os.path.isdir(os.path.join(path, e))]
    shown = 4 if len(files) > 30 else 8
    pad = " " * (4 * depth)
    out = [f"{pad}{f} ({size_text(os.path.join(path, f))})" for f in files[:shown]]
    if len(files) > shown:
        out.append(f"{pad}... and {len(files) - shown} other files")
    for d in dirs:
        out.append(f"{pad}{d}/")
        sub = tree(os.path.join(path, d), depth + 1)
        if sub:
            out.append(sub)
    return "\n".join(out)


def walk(path):
    for e in sorted(os.listdir(path)):
        p = os.path.join(path, e)
        if os.path.isdir(p):
            yield from walk(p)
        else:
            yield p


def describe_column(df, col):
    s = df[col]
    kind = str(s.dtype)
    name = f"{col} ({kind})"
    unique = s.nunique()
    if kind == "bool":
        share = s.dropna().mean() * 100
        return f"{name}: {share:.2f}% true"
    if unique < 10:
        return f"{name}: {unique} distinct values {s.dropna().unique().tolist()}"
    if kind.startswith(("int", "float")):
        return f"{name}: from {s.min():.2f} to {s.max():.2f}, {int(s.isnull().sum())} missing"
    if kind == "object":
        return f"{name}: {unique} distinct values, most common {s.value_counts().head(4).index.tolist()}"
    return name


def table(path, name, short):
    import pandas as pd

    df = pd.read_csv(path)
    out = [f"-> {name}: {df.shape[0]} rows, {df.shape[1]} columns."]
    cols = [str(c) for c in df.columns]
    if short:
        more = f" and {len(cols) - 15} more" if len(cols) > 15 else ""
        out.append("Columns: " + ", ".join(cols[:15]) + more)
    else:
        out.extend(describe_column(df, c) for c in sorted(df.columns, key=str))
    return "\n".join(out)


def outline(value, depth=0):
    pad = "  " * depth
    if isinstance(value, dict):
        return "\n".join(
            f"{pad}{k}: {outline_type(v)}" + ("\n" + outline(v, depth + 1) if isinstance(v, (dict, list)) and v else "")
            for k, v in list(value.items())[:30]
        )
    if isinstance(value, list) and value:
        return f"{pad}[items: {outline_type(value[0])}]" + (
            "\n" + outline(value[0], depth + 1) if isinstance(value[0], dict) else ""
        )
    return ""


def outline_type(v):
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(type(v), "number")


def preview(short):
    parts = ["```\n" + tree(ROOT) + "\n```"]
    for path in walk(ROOT):
        name = os.path.relpath(path, ROOT)
        ext = os.path.splitext(path)[1]
        try:
            if ext == ".csv":
                parts.append(table(path, name, short))
            elif ext == ".json":
                with open(path) as f:
                    parts.append(f"-> {name} holds:\n" + outline(json.load(f)))
            elif ext in TEXT and count_lines(path) < 30:
                with open(path, errors="replace") as f:
                    body = f.read()
                parts.append(f"-> {name} reads:\n\n" + (f"```\n{body}\n```" if ext in FENCED else body))
        except Exception as e:  # one unreadable file must not hide the others
            parts.append(f"-> {name}: could not be read ({type(e).__name__})")
    return "\n\n".join(parts)


def packages():
    names = {(d.metadata["Name"] or "").lower() for d in metadata.distributions()}
    return sorted(n for n in names if n and n not in {"pip", "setuptools", "wheel"})


def main():
    try:
        text = preview(short=False)
        if len(text) > LIMIT:
            text = preview(short=True)
    except Exception as e:
        text = f"(no preview: {type(e).__name__}: {e})"
    json.dump({"preview": text, "packages": packages(), "python": sys.version.split()[0]}, sys.stdout)


main()
