"""The aideml side of scripts/check-aide.sh, and the scenario both sides run.

check_aide.py scenario OUT.json        writes the scripted code replies, reviews and random draws
check_aide.py task DIR                 writes a small task folder (public/ with a table and a description)
check_aide.py aideml CHECKOUT SCENARIO WORKSPACE
                                       runs aideml's own Agent (aide/agent.py, journal.py, interpreter.py,
                                       data_preview, response parsing) on the scenario: its LLM backend is
                                       replaced by the scenario's replies and its random module by the
                                       scenario's draws; prints each node's decision as JSON lines and the
                                       journal as aideml serialises it to WORKSPACE/journal.json
check_aide.py compare MLEPIPE.jsonl AIDEML.jsonl [AIDE_JOURNAL.json CHECKOUT]
                                       compares the decisions; with a journal mlepipe wrote in aideml's
                                       format, loads it with aideml's own loader
"""

import ast
import importlib
import json
import logging
import sys
import types
from pathlib import Path

OK = 'import pandas as pd\npd.DataFrame({"id": [1, 2], "y": [0, 1]}).to_csv("submission.csv", index=False)\n'


def ok_reply(score, words="validation score"):
    return f"Plan: fit a simple model.\n```python\n{OK}print('{words}: {score}')\n```\n"


CRASH = "Plan: try something broken.\n```python\nraise ValueError('boom')\n```\n"
TWO_BLOCKS = (
    "Plan: two parts.\n```python\nimport pandas as pd\n```\nand then\n```python\n"
    'pd.DataFrame({"id": [1], "y": [0]}).to_csv("submission.csv", index=False)\nprint("validation score: 0.61")\n```\n'
)
NO_CODE = "I would start by looking at the data."


def review(is_bug, metric, lower=False, summary="findings"):
    return {"is_bug": is_bug, "summary": summary, "metric": metric, "lower_is_better": lower}


def scenario():
    """20 steps of preset aideml (5 drafts, debug probability 0.5, depth 3): crashes, a review that calls a clean
    run a bug, one that reads no metric, merged blocks, an answer without code, a debug chain past the bound."""
    code = [
        ok_reply(0.52),  # 0 draft: good
        CRASH,  # 1 draft: crashes
        TWO_BLOCKS,  # 2 draft: two blocks merged, good
        NO_CODE,  # asked again
        ok_reply(0.41, "Val RMSE"),  # 3 draft: the review reads no metric -> buggy
        ok_reply(0.70),  # 4 draft: the review calls it a bug -> buggy
    ]
    reviews = [
        review(False, 0.52),
        review(True, None),
        review(False, 0.61),
        review(False, None),
        review(True, 0.70),
    ]
    # After the drafts: debug chains (draw < 0.5, then the leaf's index draw) and improvements (draw >= 0.5).
    plan = [
        ("debug", CRASH, review(True, None)),
        ("debug", CRASH, review(True, None)),
        ("debug", CRASH, review(True, None)),
        ("debug", CRASH, review(True, None)),
        ("debug", CRASH, review(True, None)),
        ("improve", ok_reply(0.66), review(False, 0.66)),
        ("debug", ok_reply(0.63), review(False, 0.63)),
        ("improve", ok_reply(0.64), review(False, 0.64)),
        ("debug", CRASH, review(True, None)),
        ("improve", ok_reply(0.69), review(False, 0.69)),
        ("debug", ok_reply(0.71), review(False, 0.71)),
        ("improve", CRASH, review(True, None)),
        ("debug", ok_reply(0.5), review(False, 0.5)),
        ("improve", ok_reply(0.72), review(False, 0.72)),
        ("debug", ok_reply(0.73), review(False, 0.73)),
    ]
    draws = []
    for kind, reply, rev in plan:
        code.append(reply)
        reviews.append(rev)
        # debug: a low draw, then 0.0 picks the first debuggable leaf; improve: a high draw.
        draws.extend([0.25, 0.0] if kind == "debug" else [0.75])
    return {"steps": 20, "code": code, "reviews": reviews, "draws": draws}


def write_task(d):
    pub = Path(d) / "public"
    pub.mkdir(parents=True, exist_ok=True)
    (pub / "description.md").write_text("# Scenario\n\nPredict y from x; graded by accuracy.\n")
    (pub / "train.csv").write_text("id,x,y\n" + "".join(f"{i},{i * 0.5},{i % 2}\n" for i in range(40)))
    (pub / "test.csv").write_text("id,x\n" + "".join(f"{i},{i * 0.5}\n" for i in range(40, 50)))
    (pub / "sample_submission.csv").write_text("id,y\n" + "".join(f"{i},0\n" for i in range(40, 50)))
    (Path(d) / "task.json").write_text(json.dumps({"is_lower_better": False, "metric": "accuracy"}))


def load_aide(checkout):
    """aideml's package without its __init__ (which loads every provider's SDK), its backend replaced."""
    pkg = types.ModuleType("aide")
    pkg.__path__ = [str(Path(checkout) / "aide")]
    sys.modules["aide"] = pkg
    backend = types.ModuleType("aide.backend")

    class FunctionSpec:
        def __init__(self, name, json_schema, description):
            self.name, self.json_schema, self.description = name, json_schema, description

    backend.FunctionSpec = FunctionSpec
    sys.modules["aide.backend"] = backend
    config = types.ModuleType("aide.utils.config")
    config.Config = object
    sys.modules["aide.utils.config"] = config
    return backend


class Draws:
    """random as aide.agent uses it: random(), choice() and shuffle(), fed from the scenario."""

    def __init__(self, xs):
        self.xs = list(xs)

    def random(self):
        return self.xs.pop(0) if self.xs else 0.999

    def choice(self, seq):
        return seq[int(self.random() * len(seq))]

    def shuffle(self, x):
        pass


def run_aideml(checkout, scenario_file, workspace):
    s = json.loads(Path(scenario_file).read_text())
    backend = load_aide(checkout)
    code, reviews = list(s["code"]), list(s["reviews"])
    backend.query = lambda system_message, user_message, func_spec=None, **kw: (
        reviews.pop(0) if func_spec is not None else (code.pop(0) if code else "")
    )
    agent_mod = importlib.import_module("aide.agent")
    journal_mod = importlib.import_module("aide.journal")
    interp_mod = importlib.import_module("aide.interpreter")
    serialize = importlib.import_module("aide.utils.serialize")
    agent_mod.random = Draws(s["draws"])
    from omegaconf import OmegaConf

    cfg = OmegaConf.load(Path(checkout) / "aide" / "utils" / "config.yaml")
    cfg.workspace_dir = str(workspace)
    work = Path(workspace) / "working"
    work.mkdir(parents=True, exist_ok=True)
    interp = interp_mod.Interpreter(str(work), timeout=60)
    journal = journal_mod.Journal()
    agent = agent_mod.Agent(task_desc="Predict y from x.", cfg=cfg, journal=journal)
    try:
        for _ in range(s["steps"]):
            agent.step(exec_callback=lambda c, reset=True: interp.run(c, reset))
    finally:
        interp.cleanup_session()
    best = journal.get_best_node()
    for n in journal.nodes:
        parent = n.parent.step if n.parent is not None else None
        metric = n.metric.value if not n.is_buggy else None
        print(
            json.dumps(
                {"step": n.step, "operator": n.stage_name, "parent": parent, "buggy": n.is_buggy, "metric": metric}
            )
        )
    print(
        json.dumps(
            {
                "best": best.step if best else None,
                "code_left": len(code),
                "reviews_left": len(reviews),
                "draws_left": len(agent_mod.random.xs),
            }
        )
    )
    serialize.dump_json(journal, Path(workspace) / "journal.json")


def aira_scenario():
    """30 steps of preset aira-greedy with max_debug_depth 3: drafts hang below aira-dojo's buggy root, so a draft is
    one debug step deep already and a crash chain stops one fix earlier than aideml's."""
    code, reviews, draws = [], [], []
    for i in range(30):
        good = i in (2, 9, 17, 25)
        code.append(ok_reply(0.5 + i / 100) if good else CRASH)
        reviews.append(review(False, 0.5 + i / 100) if good else review(True, None))
    for i in range(25):
        draws.extend([0.5, (i % 3) / 3])
    return {
        "steps": 30,
        "preset": "aira-greedy",
        "max_debug_depth": 3,
        "code": code,
        "reviews": reviews,
        "draws": draws,
    }


def run_airadojo(checkout, scenario_file, ours_file):
    s = json.loads(Path(scenario_file).read_text())
    ours = [json.loads(x) for x in Path(ours_file).read_text().splitlines() if x.startswith("{")][:-1]
    sys.path.insert(0, str(Path(checkout) / "src"))
    jm = importlib.import_module("dojo.core.solvers.utils.journal")
    mm = importlib.import_module("dojo.core.solvers.utils.metric")
    # The solver's module needs hydra and the LLM stack: its search policy is read from the source and run alone.
    tree = ast.parse((Path(checkout) / "src/dojo/solvers/greedy/greedy.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Greedy")
    fn = next(n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "search_policy")
    draws = Draws(s["draws"])
    ns = {"Node": jm.Node, "random": draws}
    exec(compile(ast.Module(body=[fn], type_ignores=[]), "greedy.py", "exec"), ns)
    cfg = types.SimpleNamespace(num_drafts=5, debug_prob=1.0, max_debug_depth=s["max_debug_depth"])
    journal = jm.Journal()
    solver = types.SimpleNamespace(cfg=cfg, journal=journal, logger=logging.getLogger("aira"))
    root = jm.Node(code="", plan="", analysis="", metric=mm.WorstMetricValue(maximize=True), is_buggy=True)
    root.absorb_exec_result(None)
    journal.append(root)
    for outcome in ours:
        parent = ns["search_policy"](solver)
        op = "draft" if parent is None else "debug" if parent.is_buggy else "improve"
        node = jm.Node(code="c", plan="p", analysis="a", parents=[parent or root])
        node.is_buggy = outcome["buggy"]
        node.metric = mm.WorstMetricValue() if node.is_buggy else mm.MetricValue(outcome["metric"], maximize=True)
        journal.append(node)
        up = None if parent is None else parent.step - 1
        print(
            json.dumps(
                {
                    "step": node.step - 1,
                    "operator": op,
                    "parent": up,
                    "buggy": node.is_buggy,
                    "metric": outcome["metric"],
                    "depth": node.debug_depth,
                }
            )
        )
    best = journal.get_best_node()
    print(
        json.dumps(
            {"best": best.step - 1 if best else None, "code_left": 0, "reviews_left": 0, "draws_left": len(draws.xs)}
        )
    )


def compare(ours_file, theirs_file, journal_file=None, checkout=None):
    ours = [json.loads(x) for x in Path(ours_file).read_text().splitlines() if x.startswith("{")]
    theirs = [json.loads(x) for x in Path(theirs_file).read_text().splitlines() if x.startswith("{")]
    fields = ["operator", "parent", "buggy", "metric"]
    same = sum(1 for a, b in zip(ours[:-1], theirs[:-1]) if all(a[f] == b[f] for f in fields))
    n = max(len(ours), len(theirs)) - 1
    for a, b in zip(ours[:-1], theirs[:-1]):
        if any(a[f] != b[f] for f in fields):
            print(f"  step {a['step']}: mlepipe {a}  reference {b}")
    print(f"nodes: {n}; same decisions (operator, parent, buggy, metric): {same}")
    print(f"best node: mlepipe {ours[-1]['best']}, reference {theirs[-1]['best']}")
    print(f"replies, reviews and draws left: mlepipe {ours[-1]}, reference {theirs[-1]}")
    ok = same == n and len(ours) == len(theirs) and ours[-1] == theirs[-1]
    if journal_file:
        load_aide(checkout)
        serialize = importlib.import_module("aide.utils.serialize")
        journal_mod = importlib.import_module("aide.journal")
        j = serialize.load_json(Path(journal_file), journal_mod.Journal)
        good = [x for x in j.nodes if not x.is_buggy]
        best = j.get_best_node()
        print(
            f"mlepipe's journal read by aideml's load_json: {len(j.nodes)} nodes, {len(good)} good, "
            f"{len(j.draft_nodes)} drafts, best step {best.step if best else None}"
        )
        ok = ok and len(j.nodes) == n and (best.step if best else None) == ours[-1]["best"]
    return ok


def main():
    cmd = sys.argv[1]
    if cmd == "scenario":
        Path(sys.argv[2]).write_text(json.dumps(scenario()))
    elif cmd == "task":
        write_task(sys.argv[2])
    elif cmd == "aira-scenario":
        Path(sys.argv[2]).write_text(json.dumps(aira_scenario()))
    elif cmd == "airadojo":
        run_airadojo(*sys.argv[2:5])
    elif cmd == "aideml":
        run_aideml(*sys.argv[2:5])
    elif cmd == "compare":
        sys.exit(0 if compare(*sys.argv[2:]) else 1)


main()
