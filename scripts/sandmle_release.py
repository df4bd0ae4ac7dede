"""The release side of scripts/check-sandmle.sh: SandMLE's released agent loop, tools and reward on scripted replies.

What decides behaviour is the checkout's own code, unchanged: MultiTurnReactAgent (deepresearch_agent.py), the
PythonInterpreter and SynScore tools and submit_script_to_srun_api (deepresearch_tools.py), DeepResearchWorkflow
and its reward (deepresearch_workflow.py), sandmle_config.py, and the rllm modules they import
(rllm.agents.agent, rllm.engine.rollout.rollout_engine, rllm.tools.tool_base, rllm.tools.utils,
rllm.workflows.workflow, rllm.environments.base.base_env). The prompts, the limits and the tools are set up as
custom_train.py sets them up, and the question is built by custom_evaluate.py's build_tasks: the few statements
needed are read out of those two files (ast) and run, since importing them whole would start hydra and the trainer.

Replaced, and why:
- The package __init__ files of rllm/, rllm/agents, rllm/engine, rllm/tools, rllm/environments and
  rllm/environments/base: they import the math and tool agents, the execution engines, the code and web tools
  and the environments, with their dependencies, which the three files never use. Each is registered as an
  empty package whose __path__ is the checkout's folder, so every module named above is loaded from the
  checkout as it is. The __init__ of rllm/engine/rollout and rllm/workflows are light and do run; examples/
  and examples/deepresearch/ have none and are registered the same way (no other `examples` on the path is
  taken). Nothing else of rllm is stubbed.
- The rollout engine: a RolloutEngine whose get_model_response returns the scenario's replies in order (the
  last one again if the loop asks for more).
- The cluster: srun_api.py is served as it is by check-sandmle.sh; `srun` on PATH skips its options and runs the
  command (bash -lc ...) directly, and CONDA_BASE holds an `activate` whose `conda` does nothing (the agent
  Python is first on PATH). The release's own tool-level timeout, polling and log tails are all in play.
- Not installed: tiktoken. The release asks tiktoken for "qwen3", which it does not know, and then counts
  characters / 4; without tiktoken it takes the same fallback.
Two pass-through wrappers read what the loop makes without changing it: the agent's _prune_failed_tool_turns
(the conversation just before a pruning) and run (its result, for the termination string).
"""

import ast
import asyncio
import json
import os
import re
import sys
import types

from sandmle_scenarios import STEP_TIMEOUT, scenarios

# Registered without running their __init__ (see the header); then the light __init__ files are run.
PACKAGES = [
    "rllm",
    "rllm.agents",
    "rllm.engine",
    "rllm.engine.rollout",
    "rllm.tools",
    "rllm.workflows",
    "rllm.environments",
    "rllm.environments.base",
    "examples",
    "examples.deepresearch",
]
LIGHT_INITS = ["rllm.engine.rollout", "rllm.workflows"]
EXAMPLE = os.path.join("examples", "deepresearch")


def load(checkout: str) -> types.SimpleNamespace:
    """The release's modules, imported from the checkout."""
    for name in PACKAGES:
        mod = types.ModuleType(name)
        mod.__path__ = [os.path.join(checkout, *name.split("."))]
        sys.modules[name] = mod
    for name in LIGHT_INITS:
        path = os.path.join(checkout, *name.split("."), "__init__.py")
        mod = sys.modules[name]
        mod.__file__ = path
        with open(path, encoding="utf-8") as f:
            exec(compile(f.read(), path, "exec"), mod.__dict__)
    sys.path.insert(0, checkout)
    import importlib

    return types.SimpleNamespace(
        tools=importlib.import_module("examples.deepresearch.deepresearch_tools"),
        workflow=importlib.import_module("examples.deepresearch.deepresearch_workflow"),
        rollout=importlib.import_module("rllm.engine.rollout.rollout_engine"),
    )


def statements(path: str, names: set[str], ns: dict) -> dict:
    """Runs the top-level definitions of `names` from a release file (assignments and functions) into ns."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    keep = []
    for node in tree.body:
        targets = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        if (isinstance(node, ast.FunctionDef) and node.name in names) or names.intersection(targets):
            keep.append(node)
    exec(compile(ast.Module(body=keep, type_ignores=[]), path, "exec"), ns)
    missing = names - set(ns)
    if missing:
        raise SystemExit(f"check-sandmle: {path} has no {sorted(missing)}")
    return ns


def release_setup(checkout: str, syn_root: str) -> dict:
    """custom_train.py's prompt and limits, and custom_evaluate.py's questions."""
    from pathlib import Path

    train = statements(
        os.path.join(checkout, EXAMPLE, "custom_train.py"),
        {"SYSTEM_PROMPT", "MAX_LLM_CALLS", "MAX_TIME_S", "CALL_SERVER_TIMEOUT_S", "API_JOB_NAME"},
        {"os": os},
    )
    ev = statements(
        os.path.join(checkout, EXAMPLE, "custom_evaluate.py"),
        {"task_specific_prompt", "user_prompt_template", "load_task_description", "build_tasks"},
        {"Path": Path, "argparse": __import__("argparse")},
    )
    ids = list(scenarios())
    args = types.SimpleNamespace(max_llm_calls=train["MAX_LLM_CALLS"])
    questions = [t["question"] for t in ev["build_tasks"](ids, Path(syn_root), args)]
    return {**train, "questions": dict(zip(ids, questions))}


def compact_filtering(checkout: str) -> dict[str, bool]:
    """The masking flags of the released training scripts (rllm.compact_filtering.*), from train_mle_syn_qwen3_8b.sh."""
    with open(os.path.join(checkout, EXAMPLE, "train_mle_syn_qwen3_8b.sh"), encoding="utf-8") as f:
        text = f.read()
    return {k: v == "True" for k, v in re.findall(r"rllm\.compact_filtering\.(\w+)=(\w+)", text)}


def snapshot(messages: list[dict]) -> list[dict]:
    return [dict(m) for m in messages]


def engine_class(rollout):
    class ScriptedEngine(rollout.RolloutEngine):
        """Returns the given replies in order, and keeps the conversation each call was sent."""

        def __init__(self, replies: list[str]):
            super().__init__()
            self.replies = replies
            self.calls = 0
            # round -> the conversation right after that round's reply and tool response were appended
            self.views: dict[int, list[dict]] = {}

        async def get_model_response(self, messages, **kwargs):
            self.calls += 1
            if self.calls > 1:
                self.views.setdefault(self.calls - 1, snapshot(messages))
            text = self.replies[min(self.calls, len(self.replies)) - 1]
            return rollout.ModelOutput(text=text, content=text, finish_reason="stop")

    return ScriptedEngine


def unwrap(view: list[dict]) -> str | None:
    """The round's tool response, without the release's wrapper; None when the round got none."""
    last = view[-1]
    content = last.get("content", "")
    if last.get("role") != "user" or "<tool_response>" not in content:
        return None
    return content.removeprefix("<tool_response>\n").removesuffix("\n</tool_response>")


async def run_one(mods, setup: dict, flags: dict, cid: str, replies: list[str]) -> dict:
    engine = engine_class(mods.rollout)(replies)
    tools = {
        "PythonInterpreter": mods.tools.PythonInterpreterTool(timeout=STEP_TIMEOUT, job_name=setup["API_JOB_NAME"]),
        "Score": mods.tools.SynScoreTool(),
    }
    wf = mods.workflow.DeepResearchWorkflow(
        rollout_engine=engine,
        executor=None,
        tools=tools,
        system_prompt=setup["SYSTEM_PROMPT"],
        max_llm_calls=setup["MAX_LLM_CALLS"],
        max_time_s=setup["MAX_TIME_S"],
        call_server_timeout_s=setup["CALL_SERVER_TIMEOUT_S"],
        python_timeout_s=STEP_TIMEOUT,
    )
    agent, captured = wf.agent, {}
    prune, run = agent._prune_failed_tool_turns, agent.run

    def pruning(messages):
        engine.views[engine.calls] = snapshot(messages)
        return prune(messages)

    async def running(*args, **kwargs):
        captured["result"] = result = await run(*args, **kwargs)
        final = snapshot(result["messages"])
        tag = f"<output>{agent.current_run_dir}</output>"
        final[-1]["content"] = final[-1]["content"].removesuffix(tag)
        engine.views.setdefault(engine.calls, final)
        return result

    agent._prune_failed_tool_turns, agent.run = pruning, running
    episode = await wf.run(task={"question": setup["questions"][cid]}, uid=cid)
    if "result" not in captured:
        raise SystemExit(f"check-sandmle: the release's workflow failed on {cid}: {episode.metrics}")
    observations = [unwrap(engine.views[r]) for r in range(1, engine.calls + 1)]
    reason = episode.termination_reason
    return {
        "id": cid,
        "requests": engine.calls,
        "max_calls": setup["MAX_LLM_CALLS"],
        "observations": observations,
        "termination": captured["result"]["termination"],
        "termination_reason": reason.value,
        "masked": bool(flags.get("enable")) and bool(flags.get(f"mask_{reason.value}")),
        "reward": episode.trajectories[0].reward,
        "format": episode.metrics["format_correct_rate"],
        # The release's own words for an execution timeout (_convert_to_episode counts them so).
        "timeouts": sum("Python execution timed out" in (o or "") for o in observations),
        "run_dir": str(agent.current_run_dir),
    }


async def run_all(checkout: str, syn_root: str, log_path: str) -> list[dict]:
    mods = load(checkout)
    setup = release_setup(checkout, syn_root)
    flags = compact_filtering(checkout)
    out = []
    stdout, stderr = sys.stdout, sys.stderr
    # The agent tees its prints into each run folder; here they go to a log rather than the check's report.
    with open(log_path, "a", encoding="utf-8") as log:
        sys.stdout = sys.stderr = log
        try:
            for cid, replies in scenarios().items():
                out.append(await run_one(mods, setup, flags, cid, replies))
                # The agent left its tee in place; the next one would tee into it.
                sys.stdout = sys.stderr = log
        finally:
            sys.stdout, sys.stderr = stdout, stderr
    return out


def main(checkout: str, syn_root: str, out_path: str, log_path: str) -> None:
    results = asyncio.run(run_all(checkout, syn_root, log_path))
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(results, f, indent=1)
    print(f"check-sandmle: the release ran {len(results)} trajectories")
