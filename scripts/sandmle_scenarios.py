"""The scenarios of scripts/check-sandmle.sh: scripted replies, each list one trajectory on a task of its own.

Every scenario is a competition in the released SandMLE layout (<id>/prepared/public/ with description.md, the
data, answer.csv and an evaluator.py written for this check), so the release's SynScoreTool grades it where it
looks, and `mlepipe task import-sandmle` imports the same folder. The scripted server of the mlepipe side finds a
request's scenario by the id in its prompt, so no id may hold another, and none says "error": the release's
context pruning drops any tool response that does, and its Score answers carry the run folder, which holds the id.
"""

import json
import os

ROWS = 20
# Seconds a Python execution may run, on both sides (the release's python_timeout_s, mlepipe's step_timeout).
# Above what an ordinary execution takes through the release's polling (2 s a poll), below the sleeper's 60 s.
STEP_TIMEOUT = 20
# What the release prunes past (its max_context_tokens, mlepipe's context budget): the defaults of both.
CONTEXT_TOKENS = 32768
# Thresholds of every task (accuracy, higher is better); `null-thresholds` has no gold.
THRESHOLDS = {"gold_threshold": 0.95, "silver_threshold": 0.9, "bronze_threshold": 0.85, "median_threshold": 0.7}

EVALUATOR = '''import argparse
import csv
import json
import sys

THRESHOLDS = json.loads(%r)
# A first label of 7, 8 or 9 makes the score non-finite, as a broken metric prints it.
ODD = {7: '"inf"', 8: "Infinity", 9: "NaN"}

parser = argparse.ArgumentParser()
parser.add_argument("--submission_path")
with open("answer.csv") as f:
    truth = [row["label"] for row in csv.DictReader(f)]
with open(parser.parse_args().submission_path) as f:
    reader = csv.DictReader(f)
    labels = [row.get("label") for row in reader]
if reader.fieldnames != ["id", "label"] or len(labels) != len(truth):
    sys.exit(f"expected columns id,label and {len(truth)} rows; got {reader.fieldnames} and {len(labels)} rows")
accuracy = sum(a == b for a, b in zip(labels, truth)) / len(truth)
score = ODD.get(int(labels[0]), repr(accuracy))
print(json.dumps({"score": "@", "is_lower_better": False, **THRESHOLDS}).replace('"@"', score))
'''


def task_files(thresholds: dict) -> dict[str, str]:
    """A competition's prepared/public/ files: labels alternate 0, 1; the sample submission scores 0.5."""
    rows = range(ROWS)
    return {
        "description.md": "Predict `label` for each row of test.csv. The metric is accuracy (higher is better).\n",
        "train.csv": "id,x,label\n" + "".join(f"{i},{i},{i % 2}\n" for i in rows),
        "test.csv": "id,x\n" + "".join(f"{i},{i}\n" for i in rows),
        "sample_submission.csv": "id,label\n" + "".join(f"{i},0\n" for i in rows),
        "answer.csv": "id,label\n" + "".join(f"{i},{i % 2}\n" for i in rows),
        "evaluator.py": EVALUATOR % json.dumps(thresholds),
    }


# Reply builders: the release's format, as its system prompt shows it.
def think(t: str) -> str:
    return f"<think>{t}</think>\n"


def code(t: str, body: str) -> str:
    return f"{think(t)}<tool_call>\npython\n<code>\n{body}\n</code>\n</tool_call>"


def call(t: str, obj: str) -> str:
    return f"{think(t)}<tool_call>\n{obj}\n</tool_call>"


def score(t: str, cid: str) -> str:
    return call(t, json.dumps({"name": "Score", "arguments": {"competition_id": cid}}))


ANSWER = think("done") + "<answer>submission</answer>"


def write(right: int, first: int | None = None, header: str = "id,label") -> str:
    """A script writing submission.csv with the first `right` labels correct (accuracy right/20)."""
    lines = [f"labels = [(i % 2) if i < {right} else 1 - (i % 2) for i in range({ROWS})]"]
    if first is not None:
        lines.append(f"labels[0] = {first}")
    lines += [
        "with open('submission.csv', 'w') as f:",
        f"    f.write('{header}\\n' + ''.join(f'{{i}},{{l}}\\n' for i, l in enumerate(labels)))",
        "print('written')",
    ]
    return "\n".join(lines)


def filler(n: int) -> str:
    """A comment line of about n characters: replies long enough to pass the context budget."""
    return "# " + ("padding " * (n // 8))


ERR = "import sys\nprint('to stderr', file=sys.stderr)"


def _basics() -> dict[str, list[str]]:
    return {
        "s01-python": [
            code("look", 'print("hello")'),
            think("no code tags") + "<tool_call>\npython\nprint(2 + 3)\n</tool_call>",
            think("left open") + "<tool_call>\npython\n<code>\nprint('open')\n",
            think("plan") + "I will write the model next.",
            ANSWER,
        ],
        "s02-streams": [
            code("both", f"print('to stdout')\n{ERR}"),
            code("stderr only", ERR),
            code("silent", "x = 1"),
            code("raise", "print('partial')\nraise ValueError('bad value')"),
            code("write and both", f"{write(17)}\n{ERR}"),
            code("silent, file there", "x = 2"),
            code("stderr, file there", ERR),
            ANSWER,
        ],
        "s03-long": [
            code(
                "many lines",
                "import sys\nfor i in range(30):\n    print('out', i)\n    if i < 25:\n"
                "        print('err', i, file=sys.stderr)",
            ),
            code("twenty lines", "for i in range(20):\n    print('line', i)"),
            ANSWER,
        ],
    }


def _scores() -> dict[str, list[str]]:
    return {
        "s04-score-ok": [code("model", write(17)), score("grade", "s04-score-ok"), code("worse", write(8)), ANSWER],
        "s05-score-invalid": [
            code("wrong columns", write(17, header="id,target")),
            score("grade", "s05-score-invalid"),
            ANSWER,
        ],
        "s06-score-missing": [score("grade nothing", "s06-score-missing"), ANSWER],
        "s07-below-bronze": [code("weak", write(12)), score("grade", "s07-below-bronze"), ANSWER],
        "s08-null-thresholds": [code("perfect", write(20)), score("grade", "s08-null-thresholds"), ANSWER],
        "s16-nan": [code("nan", write(17, first=9)), score("grade", "s16-nan"), ANSWER],
        "s17-infinity": [code("infinity", write(17, first=8)), score("grade", "s17-infinity"), ANSWER],
        "s18-inf-text": [code("inf text", write(17, first=7)), score("grade", "s18-inf-text"), ANSWER],
    }


def _calls() -> dict[str, list[str]]:
    late = "s11-json5-late"
    fake = '<tool_response>\nSubmission OK. Details: {"score_primary (main competition metric for current code)": 1.0}'
    return {
        "s09-hallucinated": [
            code("run", write(17)) + f"\n{fake}\n</tool_response>\n<answer>submission</answer>",
            ANSWER,
        ],
        "s10-call-and-answer": [
            code("perfect", write(20)),
            score("grade and stop", "s10-call-and-answer") + "\n<answer>submission</answer>",
        ],
        late: [
            code("model", write(17)),
            score("my python script wrote it", late),
            call("single quotes", f"{{'name': 'Score', 'arguments': {{'competition_id': '{late}'}}}}"),
            score("grade", late),
            call("trailing comma", f"{{\"name\": 'Score', 'arguments': {{'competition_id': '{late}',}},}}"),
            ANSWER,
        ],
        "s12-unknown-tool": [
            call("other name", json.dumps({"name": "SynScore", "arguments": {"competition_id": "s12-unknown-tool"}})),
            call("no arguments", '{"name": "Score", "arguments": {}}'),
            call("interpreter by name", '{"name": "PythonInterpreter", "arguments": {"code": "print(1)"}}'),
            call("not json", "not a call at all"),
            ANSWER,
        ],
    }


def _limits() -> dict[str, list[str]]:
    n = 45000
    return {
        "s13-timeout": [
            code("slow", "import time\ntime.sleep(60)"),
            code("quick", "print(1)"),
            code("quick again", "print(2)"),
            ANSWER,
        ],
        "s14-pruning": [
            code(" ", f"{filler(n)}\nprint('Error: the first try failed')"),
            code("fine", f"{filler(n)}\nprint('fine')"),
            code("", f"{filler(n)}\nprint('Error again')"),
            code("model", f"{filler(n)}\n{write(17)}"),
            score("grade", "s14-pruning"),
            ANSWER,
        ],
        # Outputs rather than replies past the budget: 20 lines of 2,500 characters each, as the release keeps them.
        "s20-long-output": [
            code(" ", "for i in range(20):\n    print('Error', i, 'x' * 2500)"),
            code("fine", "for i in range(20):\n    print('y' * 2500)"),
            code("", "for i in range(20):\n    print('Error', i, 'z' * 2500)"),
            code("model", write(17)),
            score("grade", "s20-long-output"),
            ANSWER,
        ],
        "s15-fifteen": [code("perfect", write(20))]
        + [call(f"search {i}", json.dumps({"name": "Search", "arguments": {"query": f"q{i}"}})) for i in range(13)]
        + [score("grade and stop", "s15-fifteen") + "\n<answer>submission</answer>"],
        "s19-out-of-calls": [code("model", write(17))] + [think(f"idle {i}") + "Still thinking." for i in range(14)],
    }


def scenarios() -> dict[str, list[str]]:
    """Scenario id -> its replies, in the order a policy gives them."""
    return dict(sorted({**_basics(), **_scores(), **_calls(), **_limits()}.items()))


def thresholds(cid: str) -> dict:
    return {**THRESHOLDS, "gold_threshold": None} if cid == "s08-null-thresholds" else THRESHOLDS


def write_tasks(root: str) -> None:
    """Every scenario's competition under root, as the release ships them."""
    for cid in scenarios():
        pub = os.path.join(root, cid, "prepared", "public")
        os.makedirs(pub, exist_ok=True)
        for name, text in task_files(thresholds(cid)).items():
            with open(os.path.join(pub, name), "w", encoding="utf-8") as f:
                f.write(text)
