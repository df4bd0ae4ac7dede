"""The Python half of scripts/check-aira-dojo.sh (see there).

    check_aira_dojo.py serve PORT_FILE       a scripted OpenAI-compatible chat server standing in for the policy
    check_aira_dojo.py compare OUT           aira-dojo's journals in the harness node's outputs OUT against what
                                             mlepipe recorded (results.jsonl): runs, submissions, grades

The server writes the port it listens on to PORT_FILE. Its replies are fixed by what the request asks: aira-dojo's
analyze operator (a review of an execution) gets a review whose metric is the validation score the execution
printed; any other operator (draft, improve, debug) gets a plan and one solution for the competition named in the
prompt (a tabular classifier, or a taxi-fare regression), a little different at each call so that the search has
nodes to choose between.
"""

import glob
import http.server
import itertools
import json
import math
import os
import re
import sys

TABULAR = """import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import train_test_split

train = pd.read_csv("./data/train.csv")
test = pd.read_csv("./data/test.csv")
features = [f"f_{k:02d}" for k in range(FEATURES)]
x_tr, x_va, y_tr, y_va = train_test_split(train[features], train["target"], test_size=0.25, random_state=0)
model = LogisticRegression(C=C).fit(x_tr, y_tr)
print(f"Validation score: {roc_auc_score(y_va, model.predict_proba(x_va)[:, 1]):.6f}")
model.fit(train[features], train["target"])
pd.DataFrame({"id": test["id"], "target": model.predict_proba(test[features])[:, 1]}).to_csv(
    "./submission.csv", index=False
)
"""

TAXI = """import numpy as np
import pandas as pd
from sklearn.linear_model import Ridge
from sklearn.model_selection import train_test_split


def features(df):
    d = np.hypot(df.dropoff_longitude - df.pickup_longitude, df.dropoff_latitude - df.pickup_latitude)
    return pd.DataFrame({"distance": d, "passengers": df.passenger_count * PASSENGERS})


train = pd.read_csv("./data/labels.csv")
test = pd.read_csv("./data/test.csv")
x_tr, x_va, y_tr, y_va = train_test_split(features(train), train.fare_amount, test_size=0.25, random_state=0)
model = Ridge(alpha=ALPHA).fit(x_tr, y_tr)
print(f"Validation score: {np.sqrt(np.mean((model.predict(x_va) - y_va) ** 2)):.6f}")
model.fit(features(train), train.fare_amount)
pd.DataFrame({"key": test.key, "fare_amount": model.predict(features(test))}).to_csv("./submission.csv", index=False)
"""

CALLS = itertools.count()


def solution(prompt):
    n = next(CALLS)
    if "fare_amount" in prompt or "taxi" in prompt.lower():
        code = TAXI.replace("ALPHA", str([1.0, 0.01, 10.0][n % 3])).replace("PASSENGERS", str(n % 2))
    else:
        code = TABULAR.replace("FEATURES", str([6, 2, 4][n % 3])).replace("C=C", f"C={[1.0, 0.01, 0.1][n % 3]}")
    return f"A simple linear model with a hold-out split, refit on all the data.\n\n```python\n{code}```\n"


def review(prompt):
    found = re.findall(r"Validation score: ([0-9.eE+-]+)", prompt)
    if not found:
        return json.dumps({"is_bug": True, "summary": "The script printed no validation score.", "metric": None})
    return json.dumps({"is_bug": False, "summary": "It ran and printed its score.", "metric": float(found[-1])})


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        asks_review = "Execution output" in prompt or body.get("functions") or body.get("tools")
        content = review(prompt) if asks_review else solution(prompt)
        out = json.dumps(
            {
                "id": "chatcmpl-check",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", ""),
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": len(prompt.split()), "completion_tokens": len(content.split())},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, *args):
        pass


def serve(port_file):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(port_file, "w") as f:
        f.write(str(server.server_address[1]))
    server.serve_forever()


def best(nodes):
    """aira-dojo's get_best_node over its journal: the good nodes with a metric, greatest in its direction."""
    pool = [n for n in nodes if not n["is_buggy"] and n["metric"] is not None]
    if not pool:
        return None
    pick = pool[0]
    for n in pool[1:]:
        if (n["metric"] > pick["metric"]) if n["metric_maximize"] else (n["metric"] < pick["metric"]):
            pick = n
    return pick


def same(a, b):
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def compare(out):
    runs = [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]
    journals = sorted(glob.glob(os.path.join(out, "runs", "*", "*", "*", "out", "checkpoint", "journal.jsonl")))
    mismatches = 0
    steps = good = 0
    for r in runs:
        where = f"{r['task_id']}/{r['policy']}/{r['repeat']}"
        if not r["journal"]:
            print(f"  {where}: no journal ({r['failure']})")
            mismatches += 1
            continue
        nodes = [json.loads(line) for line in open(os.path.join(out, r["journal"]))]
        steps += len(nodes)
        good += sum(1 for n in nodes if not n["is_buggy"])
        pick = best(nodes)
        theirs = None if pick is None else (pick.get("metric_info") or {}).get("score")
        checks = {
            "steps": (r["steps"], len(nodes)),
            "submission": (r["submission"] is not None, pick is not None),
            "harness_score": (r["harness_score"], theirs),
            "score": (r["score"], theirs),
        }
        for k, (ours, ref) in checks.items():
            if not (ours == ref if isinstance(ours, bool) else same(ours, ref)):
                mismatches += 1
                print(f"  {where} {k}: mlepipe {ours!r}, aira-dojo {ref!r}")
        print(f"  {where}: {len(nodes)} steps, best score {theirs}, mlepipe's grade {r['score']} ({r['grade_status']})")
    valid = sum(1 for r in runs if r["valid_submission"])
    print(
        f"compare: {len(runs)} runs, {len(journals)} journals, {steps} steps ({good} not buggy), "
        f"{sum(1 for r in runs if r['submission'])} submissions, {valid} valid, {mismatches} mismatches"
    )
    return 1 if mismatches or not runs else 0


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        serve(sys.argv[2])
    elif sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2]))
    else:
        sys.exit(f"unknown command {sys.argv[1]}")
