"""The released SandMLE prompt texts, read from a checkout without importing it.

argv[1] is the checkout's examples/deepresearch/custom_evaluate.py. Importing
it would import the training stack it was written for, so it is parsed instead:
the module-level assignments of string literals to SYSTEM_PROMPT,
task_specific_prompt and user_prompt_template. Prints {"system", "task",
"user"} as JSON, or {"error": why} (and exits 1) when the file cannot be read
or one of the three is missing.
"""

import ast
import json
import sys

NAMES = {"SYSTEM_PROMPT": "system", "task_specific_prompt": "task", "user_prompt_template": "user"}


def texts(source: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target = node.targets[0]
        if isinstance(target, ast.Name) and target.id in NAMES:
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                found[NAMES[target.id]] = node.value.value
    return found


def main() -> int:
    path = sys.argv[1]
    try:
        with open(path, encoding="utf-8") as f:
            found = texts(f.read())
    except (OSError, SyntaxError, ValueError) as err:
        print(json.dumps({"error": f"cannot read it: {err}"}))
        return 1
    missing = [name for name, key in NAMES.items() if key not in found]
    if missing:
        print(json.dumps({"error": f"no module-level string assigned to {', '.join(missing)}"}))
        return 1
    print(json.dumps(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
