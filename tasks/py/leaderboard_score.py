# Grades the reference teams' submissions of a generated task with the task's
# own evaluator (its score_submission: the same reading, alignment, checks and
# metric an agent's submission gets), in one process: a few dozen grades cost
# one import. Trusted code on the host, run in the task's private/ folder.
# argv: evaluator.py, the teams' folder. Prints one JSON object:
# {"teams": [{"team": NAME, "score": X} or {"team": NAME, "error": WHY}, ...]}.
import importlib.util
import json
import os
import sys


def main():
    evaluator, folder = sys.argv[1], sys.argv[2]
    spec = importlib.util.spec_from_file_location("task_evaluator", evaluator)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = []
    for name in sorted(f for f in os.listdir(folder) if f.endswith(".csv")):
        team = name[: -len(".csv")]
        try:
            out.append({"team": team, "score": mod.score_submission(os.path.join(folder, name))})
        except Exception as e:  # an invalid reference submission is reported, not fatal here
            out.append({"team": team, "error": f"{type(e).__name__}: {e}"})
    sys.stdout.write(json.dumps({"teams": out}) + "\n")


if __name__ == "__main__":
    main()
