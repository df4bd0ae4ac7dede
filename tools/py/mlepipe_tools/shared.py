"""Tools for any task: logs and metrics, scripts and configs, output files."""

import ast
import json
import re
import resource
import subprocess
import sys
import time

from .common import (
    STEP_NAMES,
    ToolError,
    answer,
    metric_records,
    read_table,
    read_text,
    rnd,
    text_columns,
    tool,
    workspace_path,
)
from .configs import flat, literal, load_config, num


@tool("discover_log_metrics")
def discover_log_metrics(path):
    seen = {}
    for line, rec in metric_records(read_text(path)):
        for k, v in rec.items():
            m = seen.setdefault(k, {"name": k, "count": 0, "first": rnd(v), "first_line": line, "samples": []})
            m["count"] += 1
            m["last"] = rnd(v)
            if len(m["samples"]) < 5:
                m["samples"].append(rnd(v))
    found = sorted(seen.values(), key=lambda m: -m["count"])
    text = (
        f"{len(found)} metrics: " + ", ".join(f"{m['name']} x{m['count']} (last {m['last']})" for m in found[:12])
        if found
        else "no metrics found"
    )
    return answer(text, metrics=found)


@tool("extract_training_metric_series")
def extract_training_metric_series(path, metrics=None):
    records = metric_records(read_text(path))
    names = sorted({k for _, r in records for k in r})
    want = [metrics] if isinstance(metrics, str) else list(metrics or [n for n in names if n.lower() not in STEP_NAMES])
    missing = [m for m in want if m not in names]
    if missing:
        raise ToolError(f"{path}: no metric {', '.join(missing)} (found: {', '.join(names) or 'none'})")
    out = {}
    for m in want:
        pts = []
        for _, r in records:
            if m in r:
                # The step the log names on that line, else the value's position.
                step = next((r[s] for s in STEP_NAMES if s in r and s != m), None)
                pts.append({"step": rnd(step) if step is not None else len(pts), "value": rnd(r[m], 6)})
        out[m] = pts
    text = (
        "; ".join(f"{m}: {len(p)} points, {p[0]['value']} -> {p[-1]['value']}" for m, p in out.items() if p)
        or "no series"
    )
    return answer(text, series=out)


@tool("verify_hyperparam_effective")
def verify_hyperparam_effective(path, params=None):
    """Static reading only: where each name is set, with which values, and what the environment may override."""
    src = read_text(path)
    try:
        tree = ast.parse(src)
    except SyntaxError as e:
        raise ToolError(f"{path}:{e.lineno}: does not parse: {e.msg}") from None
    sites, env = {}, []

    def add(name, value, line, how):
        sites.setdefault(name, []).append({"line": line, "value": value, "kind": how})

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    add(t.id, literal(node.value), node.lineno, "assignment")
                elif isinstance(t, ast.Attribute):
                    add(t.attr, literal(node.value), node.lineno, "attribute")
                elif (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.slice, ast.Constant)
                    and isinstance(t.slice.value, str)
                ):
                    add(t.slice.value, literal(node.value), node.lineno, "item")
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str):
                    add(k.value, literal(v), node.lineno, "dict")
        elif isinstance(node, ast.Call):
            fn = ast.unparse(node.func)
            if fn.endswith("add_argument") and node.args and isinstance(node.args[0], ast.Constant):
                default = next((literal(k.value) for k in node.keywords if k.arg == "default"), None)
                add(str(node.args[0].value).lstrip("-").replace("-", "_"), default, node.lineno, "argparse default")
            elif fn in ("os.environ.get", "os.getenv") and node.args:
                env.append({"line": node.lineno, "variable": literal(node.args[0])})
            for k in node.keywords:
                # add_argument's own keywords (type=, help=) are not hyperparameters.
                if k.arg and not fn.endswith("add_argument"):
                    add(k.arg, literal(k.value), node.lineno, f"keyword of {fn}")
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) == "os.environ":
            env.append({"line": node.lineno, "variable": literal(node.slice)})
    names = [params] if isinstance(params, str) else list(params or [n for n, s in sites.items() if len(s) > 1])
    report = []
    for n in names:
        s = sites.get(n, [])
        values = {json.dumps(x["value"], default=str) for x in s}
        report.append(
            {"name": n, "sites": s, "conflicting": len(values) > 1, "effective_guess": s[-1]["value"] if s else None}
        )
    conflicts = [r["name"] for r in report if r["conflicting"]]
    never = [r["name"] for r in report if not r["sites"]]
    text = (
        f"{len(report)} names checked; conflicting values: {', '.join(conflicts) or 'none'}"
        + (f"; never set: {', '.join(never)}" if never else "")
        + (f"; environment reads: {', '.join(str(e['variable']) for e in env)}" if env else "")
    )
    return answer(text, params=report, environment_overrides=env, note="static analysis: the run-time value may differ")


@tool("estimate_peak_memory")
def estimate_peak_memory(script, seconds=20, args=None):
    """Runs the script briefly (it may write files as it would in a real run) and measures its peak memory.
    GPU memory is read only when the script itself used torch: importing it just to ask would cost seconds."""
    full = workspace_path(script)
    cmd = [sys.executable, full, *([args] if isinstance(args, str) else list(args or []))]
    probe = (
        "import runpy,sys,atexit\n"
        "def _gpu():\n"
        "    t = sys.modules.get('torch')\n"
        "    if t is not None and t.cuda.is_available(): print('__MLEPIPE_GPU_PEAK__', t.cuda.max_memory_allocated(), file=sys.stderr)\n"
        "atexit.register(_gpu)\nsys.argv=sys.argv[1:]\nrunpy.run_path(sys.argv[0], run_name='__main__')\n"
    )
    start = time.monotonic()
    try:
        p = subprocess.run([sys.executable, "-c", probe, *cmd[1:]], capture_output=True, text=True, timeout=seconds)
        code, err, stopped = p.returncode, p.stderr, False
    except subprocess.TimeoutExpired as e:
        code, err, stopped = (
            None,
            (e.stderr or b"").decode("utf-8", "replace") if isinstance(e.stderr, bytes) else (e.stderr or ""),
            True,
        )
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    gpu = re.search(r"__MLEPIPE_GPU_PEAK__ (\d+)", err)
    oom = bool(re.search(r"MemoryError|out of memory|CUDA out of memory|Killed", err)) or code in (-9, 137)
    status = "stopped after the probe window" if stopped else f"exited {code}"
    text = (
        f"{script}: peak CPU memory {peak_mb:.0f} MB"
        + (f", peak GPU memory {int(gpu.group(1)) / 2**20:.0f} MB" if gpu else ", no GPU visible")
        + f"; {status}"
        + ("; OUT OF MEMORY" if oom else "")
    )
    return answer(
        text,
        peak_rss_mb=rnd(peak_mb, 1),
        peak_gpu_mb=rnd(int(gpu.group(1)) / 2**20, 1) if gpu else None,
        gpu_available=bool(gpu),
        oom=oom,
        exit_code=code,
        stopped_at_timeout=stopped,
        seconds=rnd(time.monotonic() - start, 2),
        stderr_tail=err[-800:],
    )


@tool("trace_tensor_shapes")
def trace_tensor_shapes(path, model, input_shape, dtype="float32"):
    """Builds MODEL (a class or function in the file, called without arguments) on the CPU and runs one dummy batch."""
    import runpy
    import torch

    full = workspace_path(path)
    try:
        ns = runpy.run_path(full, run_name="__mlepipe_trace__")
    except Exception as e:
        raise ToolError(f"{path}: importing it failed: {type(e).__name__}: {e}") from None
    if model not in ns:
        raise ToolError(
            f"{path}: no {model!r} defined (found: {', '.join(k for k, v in ns.items() if isinstance(v, type) and issubclass(v, torch.nn.Module))})"
        )
    net = ns[model]()
    rows = []

    def hook(name):
        def record(mod, inp, out):
            shape = (
                list(out.shape)
                if hasattr(out, "shape")
                else [list(o.shape) for o in out if hasattr(o, "shape")]
                if isinstance(out, (tuple, list))
                else None
            )
            rows.append(
                {
                    "layer": name,
                    "type": type(mod).__name__,
                    "input": [list(i.shape) for i in inp if hasattr(i, "shape")],
                    "output": shape,
                }
            )

        return record

    for name, mod in net.named_modules():
        if name:
            mod.register_forward_hook(hook(name))
    x = torch.zeros(*input_shape, dtype=getattr(torch, dtype))
    net.eval()
    try:
        with torch.no_grad():
            out = net(x)
    except Exception as e:
        last = rows[-1]["layer"] if rows else "(input)"
        return answer(
            f"forward pass failed after {last}: {type(e).__name__}: {e}",
            layers=rows,
            ok=False,
            error=f"{type(e).__name__}: {e}",
            failed_after=last,
        )
    shape = list(out.shape) if hasattr(out, "shape") else None
    return answer(
        f"{len(rows)} layers, input {list(input_shape)} -> output {shape}", layers=rows, ok=True, output=shape
    )


def _training_rules(c, rule):
    """The settings of a neural network's training run (a trainer's config file, or a script's constants)."""
    lr = num(c, "learning_rate", "lr")
    rule("learning rate in (0, 1)", None if lr is None else 0 < lr < 1, f"learning_rate={lr}")
    bs = num(c, "batch_size", "per_device_train_batch_size", "train_batch_size")
    rule("batch size positive", None if bs is None else bs > 0, f"batch_size={bs}")
    ep = num(c, "epochs", "num_epochs", "num_train_epochs")
    rule("epochs positive", None if ep is None else ep > 0, f"epochs={ep}")
    warm, total = num(c, "warmup_steps"), num(c, "max_steps", "total_steps", "num_training_steps")
    rule(
        "warmup shorter than training",
        None if warm is None or total is None else warm < total,
        f"warmup_steps={warm}, total={total}",
    )
    hid, heads = (
        num(c, "hidden_size", "d_model", "embed_dim"),
        num(c, "num_attention_heads", "num_heads", "n_head", "nhead"),
    )
    rule(
        "heads divide the hidden size",
        None if hid is None or not heads else hid % heads == 0,
        f"hidden_size={hid}, heads={heads}",
    )
    seq, pos = (
        num(c, "max_seq_length", "max_length", "seq_len", "block_size"),
        num(c, "max_position_embeddings", "n_positions"),
    )
    rule(
        "sequence length within position embeddings",
        None if seq is None or pos is None else seq <= pos,
        f"max_seq_length={seq}, max_position_embeddings={pos}",
    )
    rule(
        "not both fp16 and bf16",
        None if "fp16" not in c or "bf16" not in c else not (c["fp16"] is True and c["bf16"] is True),
        f"fp16={c.get('fp16')}, bf16={c.get('bf16')}",
    )
    ga = num(c, "gradient_accumulation_steps")
    rule(
        "gradient accumulation a positive integer",
        None if ga is None else float(ga).is_integer() and ga >= 1,
        f"gradient_accumulation_steps={ga}",
    )
    drop = num(c, "dropout", "hidden_dropout_prob")
    rule("dropout in [0, 1)", None if drop is None else 0 <= drop < 1, f"dropout={drop}")
    fr = [
        num(c, k)
        for k in ("train_size", "val_size", "test_size", "validation_split")
        if num(c, k) is not None and num(c, k) <= 1
    ]
    rule("split fractions sum to at most 1", None if len(fr) < 2 else sum(fr) <= 1 + 1e-9, f"fractions={fr}")


def _script_rules(c, rule):
    """Constants of small scikit-learn and numpy training scripts (the suite's starters among them)."""
    inv = num(c, "C")
    rule(
        "inverse regularization C at least 0.01 (smaller shrinks the model to its intercept)",
        None if inv is None else inv >= 0.01,
        f"C={inv}",
    )
    alpha = num(c, "alpha", "weight_decay", "l2")
    rule(
        "L2 penalty alpha at most 100 (larger flattens the fit)",
        None if alpha is None else 0 <= alpha <= 100,
        f"alpha={alpha}",
    )
    it = num(c, "max_iter", "n_estimators", "iterations")
    rule("iterations positive", None if it is None else it > 0, f"max_iter={it}")
    ctx = num(c, "maxlen", "maxwords", "max_len", "max_tokens", "context_length")
    rule("context of at least 16 tokens", None if ctx is None else ctx >= 16, f"max length={ctx}")
    hops = num(c, "hops", "num_layers", "n_layers", "propagation_steps")
    rule(
        "at most 10 propagation hops or layers (deeper smooths node features together)",
        None if hops is None else 0 < hops <= 10,
        f"hops={hops}",
    )
    fan = num(c, "fanout", "num_neighbors")
    rule("neighbour fanout at least 2 (or all neighbours)", None if fan is None else fan >= 2, f"fanout={fan}")
    erase = num(c, "erase", "erase_ratio", "cutout")
    rule("erased share of the image side below 0.5", None if erase is None else 0 <= erase < 0.5, f"erase={erase}")
    temp = num(c, "temperature")
    rule("temperature positive", None if temp is None else temp > 0, f"temperature={temp}")


@tool("check_config_consistency")
def check_config_consistency(path):
    c = flat(load_config(path))
    checks = []

    def rule(name, ok, detail):
        if ok is not None:
            checks.append({"rule": name, "ok": bool(ok), "detail": detail})

    _training_rules(c, rule)
    _script_rules(c, rule)
    bad = [x for x in checks if not x["ok"]]
    text = f"{len(checks)} rules applied, {len(bad)} violated" + "".join(f"; {x['rule']}: {x['detail']}" for x in bad)
    return answer(text, checks=checks, violations=len(bad), keys=sorted(map(str, c))[:100])


@tool("validate_output_format")
def validate_output_format(
    path, required_fields=None, sample=None, max_length=None, pattern=None, field=None, expected_rows=None
):
    """Checks records against the fields they must have (or those of a sample file), lengths and a pattern."""
    df = read_table(path)
    required = [required_fields] if isinstance(required_fields, str) else list(required_fields or [])
    problems = []
    if sample is not None:
        ref = read_table(sample)
        required = required or list(ref.columns)
        if expected_rows is None:
            expected_rows = len(ref)
        if "id" in ref.columns and "id" in df.columns and set(ref["id"].astype(str)) != set(df["id"].astype(str)):
            problems.append("ids differ from the sample's")
    missing = [f for f in required if f not in df.columns]
    extra = [f for f in df.columns if required and f not in required]
    if missing:
        problems.append(f"missing fields: {', '.join(missing)}")
    if extra:
        problems.append(f"unexpected fields: {', '.join(map(str, extra))}")
    if expected_rows is not None and len(df) != expected_rows:
        problems.append(f"{len(df)} records, expected {expected_rows}")
    empty = {str(c): int(df[c].isna().sum()) for c in df.columns if df[c].isna().any()}
    if empty:
        problems.append(f"empty values: {empty}")
    cols = [field] if field else text_columns(df)
    too_long = bad_pattern = 0
    for c in cols:
        if c not in df.columns:
            raise ToolError(f"{path}: no field {c!r}")
        s = df[c].dropna().astype(str)
        if max_length is not None:
            too_long += int((s.str.len() > max_length).sum())
        if pattern is not None:
            bad_pattern += int((~s.str.fullmatch(pattern)).sum())
    if too_long:
        problems.append(f"{too_long} values longer than {max_length}")
    if bad_pattern:
        problems.append(f"{bad_pattern} values not matching {pattern}")
    text = f"{path}: {len(df)} records, " + ("format ok" if not problems else "; ".join(problems))
    return answer(
        text,
        records=len(df),
        fields=list(map(str, df.columns)),
        missing_fields=missing,
        unexpected_fields=list(map(str, extra)),
        empty_values=empty,
        too_long=too_long,
        pattern_violations=bad_pattern,
        ok=not problems,
        problems=problems,
    )
