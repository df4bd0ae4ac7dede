// A small stand-in for facebookresearch/aira-dojo, following the interface of its real code as the harness
// stage drives it: `python -m dojo.main_run --config-dir DIR +_exp=NAME`, Hydra's experiment file with
// `# @package _global_` and a defaults list, the client file an operator's `llm.client` override names
// (base_url, model_id), MLE_BENCH_DATA_DIR/<task.name>/prepared/{public,private}, the solution run in
// <logger.output_dir>/workspace_agent with the public data as ./data, submission.csv graded against the
// private answers and then deleted, the analyze operator's review, and the journal at
// <logger.output_dir>/checkpoint/journal.jsonl with aira-dojo's node fields, and USER and PWD read from the
// environment. Its search is a plain loop of step_limit drafts; a reply holding "HARNESS-EXIT n" makes it exit
// with code n, as a crash would. For the tests, not aira-dojo: each start appends its task to invocations.txt in
// the folder above the checkout, and the start counted by a file interrupt-at there stops mlepipe as Ctrl-C does.
const MAIN_RUN = `import json, os, re, shutil, signal, subprocess, sys, time, urllib.request
import uuid

import pandas as pd
import yaml


def load(path):
    with open(path) as f:
        return yaml.safe_load(f) or {}


def chat(client, content):
    body = json.dumps({"model": client["model_id"], "messages": [{"role": "user", "content": content}]})
    req = urllib.request.Request(
        client["base_url"].rstrip("/") + "/chat/completions",
        data=body.encode(),
        headers={"content-type": "application/json", "authorization": "Bearer " + os.environ.get("OPENAI_API_KEY", "")},
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)["choices"][0]["message"]["content"]


def count_started(name):
    project = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    with open(os.path.join(project, "invocations.txt"), "a") as f:
        f.write(name + "\\n")
    stop = os.path.join(project, "interrupt-at")
    if os.path.exists(stop) and len(open(os.path.join(project, "invocations.txt")).readlines()) == int(open(stop).read()):
        os.kill(os.getppid(), signal.SIGINT)
        time.sleep(60)


def main():
    # Its metadata reads both through oc.env, which fails on a variable that is not set.
    assert os.environ.get("USER") and os.environ.get("PWD"), "USER and PWD must be set"
    args = sys.argv[1:]
    config_dir = args[args.index("--config-dir") + 1]
    exp = next(a.split("=", 1)[1] for a in args if a.startswith("+_exp="))
    cfg = load(os.path.join(config_dir, "_exp", exp + ".yaml"))
    overrides = {k: v for d in cfg["defaults"] if isinstance(d, dict) for k, v in d.items()}
    assert overrides["override /interpreter"] == "python", overrides
    assert overrides["override /solver"] == "mlebench/greedy", overrides
    client_name = overrides["override /solver/client@solver.operators.draft.llm.client"]
    client = load(os.path.join(config_dir, "solver", "client", client_name + ".yaml"))
    task, solver, logger = cfg["task"], cfg.get("solver", {}), cfg["logger"]
    count_started(task["name"])
    data = os.environ["MLE_BENCH_DATA_DIR"] if task.get("cache_dir") is None else task["cache_dir"]
    public = os.path.join(data, task["name"], "prepared", "public")
    private = os.path.join(data, task["name"], "prepared", "private")
    out = logger["output_dir"]
    work = os.path.join(out, "workspace_agent")
    os.makedirs(work, exist_ok=True)
    os.makedirs(os.path.join(out, "checkpoint"), exist_ok=True)
    if not os.path.exists(os.path.join(work, "data")):
        os.symlink(public, os.path.join(work, "data"))
    with open(os.path.join(out, "seen_config.json"), "w") as f:
        json.dump({"client": client, "overrides": overrides, "task": task, "solver": solver, "cfg": cfg}, f)
    answers = pd.read_csv(os.path.join(private, "test.csv"))
    journal = os.path.join(out, "checkpoint", "journal.jsonl")
    for step in range(int(solver.get("step_limit", 2))):
        reply = chat(client, open(os.path.join(public, "description.md")).read())
        crash = re.search(r"HARNESS-EXIT (\\d+)", reply)
        if crash:
            sys.exit(int(crash.group(1)))
        code = re.search(r"\`\`\`python\\n(.*?)\`\`\`", reply, re.S).group(1)
        with open(os.path.join(work, "solution.py"), "w") as f:
            f.write(code)
        started = time.time()
        proc = subprocess.run([sys.executable, "solution.py"], cwd=work, capture_output=True, text=True,
                              timeout=int(solver.get("execution_timeout", 600)))
        sub = os.path.join(work, "submission.csv")
        score = None
        if proc.returncode == 0 and os.path.exists(sub):
            pred = pd.read_csv(sub)
            score = float((pred["label"].astype(str).values == answers["label"].astype(str).values).mean())
        if os.path.exists(sub):
            os.unlink(sub)
        review = json.loads(chat(client, "review: " + proc.stdout))
        buggy = bool(review["is_bug"]) or proc.returncode != 0
        node = {
            "step": step + 1, "id": uuid.uuid4().hex, "plan": reply.split("\`\`\`")[0].strip(), "code": code,
            "metric": None if buggy else review["metric"], "metric_maximize": not review["lower_is_better"],
            "metric_info": {"score": score} if score is not None else {}, "is_buggy": buggy,
            "analysis": review.get("summary", ""), "children": [], "parents": [],
            "creation_time": started, "term_out": proc.stdout[-2000:], "exec_time": time.time() - started,
            "exit_code": proc.returncode,
        }
        with open(journal, "a") as f:
            f.write(json.dumps(node) + "\\n")


if __name__ == "__main__":
    main()
`;

/** The stand-in's own experiment file of a solver, and the overlay's, in the shapes the real ones have. */
const experiment = (operators: string, client: string) => `# @package _global_
defaults:
  - override /interpreter: jupyter
  - override /solver: mlebench/greedy
  - override /benchmark: mlebench/lite
  - override /solver/operators/mlebench@solver.operators:
    - ${operators}_operators/debug
    - ${operators}_operators/draft
    - ${operators}_operators/improve
    - aide_operators/analyze
  - override /solver/client@solver.operators.analyze.llm.client: ${client}
  - override /solver/client@solver.operators.debug.llm.client: ${client}
  - override /solver/client@solver.operators.draft.llm.client: ${client}
  - override /solver/client@solver.operators.improve.llm.client: ${client}

metadata:
  git_issue_id: standin

vars:
  metadata.seed: [1]
`;

/** The checkout (under `root`), an overlay beside it, and stub packages for the modules the preflight asks for. */
export function standinFiles(root: string, overlay: string): Record<string, string> {
  const stubs = ['hydra', 'omegaconf', 'litellm', 'mlebench', 'dataclasses_json', 'torch', 'transformers'];
  return {
    [`${root}/src/dojo/__init__.py`]: '',
    [`${root}/src/dojo/main_run.py`]: MAIN_RUN,
    [`${root}/src/dojo/configs/default_run.yaml`]: 'defaults:\n  - task: ???\n  - solver: ???\n  - interpreter: ???\n',
    [`${root}/src/dojo/solvers/greedy/greedy.py`]: '',
    [`${root}/src/dojo/configs/_exp/mlebench/aide_greedy_o3.yaml`]: experiment('aide', 'litellm_o3'),
    [`${root}/src/dojo/configs/_exp/mlebench/aira_greedy_o3.yaml`]: experiment('aira', 'litellm_o3'),
    [`${overlay}/src/dojo/configs/_exp/mlebench/aide_greedy_qwen3_8b.yaml`]: experiment('aide', 'litellm_qwen3_8b'),
    [`${overlay}/src/dojo/configs/_exp/mlebench/aide_greedy_qwen3_14b.yaml`]: experiment('aide', 'litellm_qwen3_14b'),
    ...Object.fromEntries(stubs.map((m) => [`stubs/${m}/__init__.py`, ''])),
  };
}

/** The interpreter the stage is given: `python` with the stubs on its path, as a harness's environment has them. */
export const pythonWrapper = (python: string) =>
  `#!/bin/sh\nPYTHONPATH="$(dirname "$0")/stubs\${PYTHONPATH:+:$PYTHONPATH}" exec ${python} "$@"\n`;

/** A reply of the draft operator: a plan, then one fenced solution. */
export const draft = (code: string) => ({ content: `A first simple plan.\n\n\`\`\`python\n${code}\`\`\`\n` });

/** A reply of the analyze operator. */
export const review = (metric: number, isBug = false) => ({
  content: JSON.stringify({ is_bug: isBug, metric, lower_is_better: false, summary: 'reviewed' }),
});
