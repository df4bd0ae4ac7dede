# Grades the reference teams' submissions of a generated task with the task's
# own evaluator (its score_submission: the same reading, alignment, checks and
# metric an agent's submission gets), in one process: a few dozen grades cost
# one import. An evaluator without score_submission (one an LLM wrote) runs
# once per team as a command, and its printed score counts. Trusted code on the host, run in the task's private/ folder.
# argv: evaluator.py, the teams' folder. Prints one JSON object:
# {"teams": [{"team": NAME, "score": X} or {"team": NAME, "error": WHY}, ...]}.
import importlib.util
import json
import os
import subprocess
import sys


def by_command(evaluator, path):
    r = subprocess.run(
        [sys.executable, evaluator, "--submission_path", path], capture_output=True, text=True, timeout=300
    )
    if r.returncode != 0:
        raise RuntimeError(f"exit {r.returncode}: {r.stderr.strip()[-300:]}")
    # The last line that starts an object; an evaluator may log before it (docs/tasks.md).
    starts = [i for i, line in enumerate(r.stdout.splitlines()) if line.startswith("{")]
    if not starts:
        raise RuntimeError("no JSON answer")
    answer = json.loads("\n".join(r.stdout.splitlines()[starts[-1] :]))
    if "error" in answer:
        raise RuntimeError(answer["error"])
    return float(answer["score"])


def main():
    evaluator, folder = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("task_evaluator", evaluator)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except BaseException:  # an evaluator that does its work on import (no main guard) is run as a command
        mod = None
    out = []
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".csv")):
        team = name[: -len(".csv")]
        try:
            path = os.path.join(folder, name)
            score = mod.score_submission(path) if hasattr(mod, "score_submission") else by_command(evaluator, path)
            out.append({"team": team, "score": score})
        except Exception as e:  # an invalid reference submission is reported, not fatal here
            out.append({"team": team, "error": f"{type(e).__name__}: {e}"})
    sys.stdout.write(json.dumps({"teams": out}) + "\n")


if __name__ == "__main__":
    main()
