"""Reading a configuration as the tools see it: a JSON file, a flat `key: value` file, or the constants a training
script sets, with the number a key holds under any of its usual names."""

import ast
import json
import re

from .common import ToolError, read_text


def literal(node):
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return ast.unparse(node)


def load_config(path):
    text = read_text(path)
    if path.endswith(".json"):
        try:
            return json.loads(text)
        except ValueError as e:
            raise ToolError(f"{path}: not JSON: {e}") from None
    if path.endswith(".py"):
        return script_constants(text, path)
    # key: value / key = value lines (YAML-like or INI-like flat files).
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z_][\w.-]*)\s*[:=]\s*([^#]+)", line)
        if m:
            v = m.group(2).strip().strip("'\"")
            try:
                out[m.group(1)] = json.loads(v.lower() if v.lower() in ("true", "false", "null") else v)
            except ValueError:
                out[m.group(1)] = v
    return out


ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}


def value(node, env):
    """A constant expression's value: literals, arithmetic, names set earlier and `args.x` read as its
    argparse default (`C=1.0 + 0.1 * args.seed` is 1.0 as the script runs by default); else its source."""
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and f"{node.value.id}.{node.attr}" in env:
        return env[f"{node.value.id}.{node.attr}"]
    if isinstance(node, ast.BinOp) and type(node.op) in ARITH:
        a, b = value(node.left, env), value(node.right, env)
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
            try:
                return ARITH[type(node.op)](a, b)
            except (ArithmeticError, ValueError):
                pass
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = value(node.operand, env)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return -v
    return literal(node)


def script_constants(text, path):
    """What a training script sets: module-level assignments (MAXLEN = 128), argparse defaults and the
    keyword arguments of its calls (LogisticRegression(C=20.0)), in source order, the first setting winning."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise ToolError(f"{path}:{e.lineno}: does not parse: {e.msg}") from None
    env, out = {}, {}
    for node in sorted((n for n in ast.walk(tree) if hasattr(n, "lineno")), key=lambda n: (n.lineno, n.col_offset)):
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            env[node.targets[0].id] = value(node.value, env)
            out.setdefault(node.targets[0].id, env[node.targets[0].id])
        elif isinstance(node, ast.Call):
            kws = {k.arg: value(k.value, env) for k in node.keywords if k.arg}
            flag = (
                node.args[0].value
                if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
                else ""
            )
            if (
                isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"
                and flag.startswith("--")
                and "default" in kws
            ):
                name = flag[2:].replace("-", "_")
                env[f"args.{name}"] = kws["default"]
                out.setdefault(name, kws["default"])
            else:
                for k, v in kws.items():
                    out.setdefault(k, v)
    return out


def flat(d, prefix=""):
    out = {}
    for k, v in d.items() if isinstance(d, dict) else []:
        if isinstance(v, dict):
            out.update(flat(v, f"{prefix}{k}."))
        out[k] = v
    return out


def num(c, *keys):
    """The first of these keys the config sets to a number, in any letter case (scripts write MAXLEN)."""
    lower = {str(k).lower(): v for k, v in reversed(list(c.items()))}
    for k in keys:
        v = lower.get(k.lower())
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
    return None
