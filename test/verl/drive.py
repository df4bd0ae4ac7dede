"""Runs an export's agent loop and reward function on some of its tasks, the
way verl's agent-loop workers and reward loop call them, against an
OpenAI-compatible chat server (the tests' replay server), and prints one JSON
line per trajectory. With --ray ADDRESS, each episode and each grading is a Ray
task on that cluster, with the export as the job's working directory.

    python drive.py EXPORT_DIR TOKENIZER_DIR TASK_ID... [--ray ADDRESS]

The tokenizer is a tiny BPE trained here under Qwen3's chat template (no
download): verl's agent loop tokenises the conversation with it to build the
token record, with verl's Qwen3 token builder."""

import asyncio
import json
import os
import sys

# How long the driver waits for a round of Ray tasks (an episode takes seconds here).
RAY_WAIT_S = 180


def train_tokenizer(path):
    """A tokenizer trained here under Qwen3's real chat template (gpu/verl/tests/harness.py), saved for the loop to load."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gpu", "verl", "tests"))
    from harness import train_tokenizer as trained

    trained("qwen3").save_pretrained(path)


def compose(export_dir):
    """verl's config from the export's overrides, composed by the export's own mlepipe_verl (on the path)."""
    import yaml

    from mlepipe_verl.config import compose as compose_overrides

    with open(os.path.join(export_dir, "trainer_overrides.yaml"), encoding="utf-8") as f:
        return compose_overrides(yaml.safe_load(f)["overrides"])


def rows(export_dir):
    import pandas as pd

    out = {}
    for split in ("train", "val"):
        for r in pd.read_parquet(os.path.join(export_dir, "data", f"{split}.parquet")).to_dict("records"):
            r["prompt"] = [dict(m) for m in r["prompt"]]
            out[r["extra_info"]["task_id"]] = r
    return out


def episode(export_dir, tokenizer_dir, row):
    """One rollout, as verl's AgentLoopWorker instantiates and runs an agent loop."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap

    os.chdir(export_dir)
    sys.path.insert(0, export_dir)
    config = compose(export_dir)
    entry = {e.name: e for e in OmegaConf.load(config.actor_rollout_ref.rollout.agent.agent_loop_config_path)}[
        row["agent_name"]
    ]
    loop = instantiate(
        entry,
        trainer_config=DictConfigWrap(config=config),
        server_manager=None,
        tokenizer=AutoTokenizer.from_pretrained(tokenizer_dir),
        processor=None,
        hf_model_type="qwen3",
        dataset_cls=None,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap([]),
    )
    out = asyncio.run(
        loop.run(
            {"temperature": 1.0, "top_p": 1.0},
            raw_prompt=row["prompt"],
            extra_info=row["extra_info"],
            data_source=row["data_source"],
        )
    )
    return {
        "prompt_ids": len(out.prompt_ids),
        "response_ids": len(out.response_ids),
        "mask_ones": sum(out.response_mask),
        "extra_fields": out.extra_fields,
    }


def grade(export_dir, row, extra_fields):
    """The reward, as verl's naive reward manager calls the custom reward function."""
    from verl.utils.import_utils import load_extern_object

    os.chdir(export_dir)
    fn = load_extern_object(module_path="reward_fn.py", object_name="compute_score")
    extra_info = dict(row["extra_info"])
    extra_info.update(extra_fields.items())
    return fn(
        data_source=row["data_source"],
        solution_str="",
        ground_truth=row["reward_model"]["ground_truth"],
        extra_info=extra_info,
    )


def report(task_id, ep, scored):
    e = ep["extra_fields"]["mlepipe_episode"]
    turns = [{k: t[k] for k in ("action", "timed_out", "exit_code", "format_ok")} for t in e["turns"]]
    return {
        "task_id": task_id,
        "reward": scored["score"],
        "variables": {k[len("mlepipe_") :]: v for k, v in scored.items() if k.startswith("mlepipe_")},
        "ended": e["ended"],
        "turns": turns,
        "timed_out": ep["extra_fields"]["mlepipe_timed_out"],
        "prompt_ids": ep["prompt_ids"],
        "response_ids": ep["response_ids"],
        "mask_ones": ep["mask_ones"],
        "pid": ep.get("pid"),
    }


def main(argv):
    ray_address = None
    if "--ray" in argv:
        i = argv.index("--ray")
        ray_address = argv[i + 1]
        argv = argv[:i] + argv[i + 2 :]
    export_dir, tokenizer_dir, task_ids = os.path.abspath(argv[0]), os.path.abspath(argv[1]), argv[2:]
    train_tokenizer(tokenizer_dir)
    all_rows = rows(export_dir)
    if ray_address is None:
        for t in task_ids:
            ep = episode(export_dir, tokenizer_dir, all_rows[t])
            print(json.dumps(report(t, ep, grade(export_dir, all_rows[t], ep["extra_fields"]))), flush=True)
        return 0
    import ray

    env = {k: os.environ[k] for k in ("MLEPIPE_SANDBOX_URL", "MLEPIPE_CHAT_URL")}
    ray.init(
        address=ray_address,
        runtime_env={"working_dir": export_dir, "excludes": ["tasks/"], "env_vars": env},
        log_to_driver=False,
    )
    try:
        # In the job's working directory: the export as Ray uploaded it, without tasks/.
        run_episode = ray.remote(num_cpus=1)(
            lambda row: {
                **episode(os.getcwd(), tokenizer_dir, row),
                "pid": os.getpid(),
                "has_tasks": os.path.exists("tasks"),
            }
        )
        run_grade = ray.remote(num_cpus=1)(lambda row, extra: grade(os.getcwd(), row, extra))
        # Bounded: a task that never gets a worker fails here, with Ray's error, instead of holding the test.
        eps = ray.get([run_episode.remote(all_rows[t]) for t in task_ids], timeout=RAY_WAIT_S)
        grades = [run_grade.remote(all_rows[t], ep["extra_fields"]) for t, ep in zip(task_ids, eps)]
        scores = ray.get(grades, timeout=RAY_WAIT_S)
        for t, ep, s in zip(task_ids, eps, scores):
            print(
                json.dumps({**report(t, ep, s), "driver_pid": os.getpid(), "worker_saw_tasks": ep["has_tasks"]}),
                flush=True,
            )
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
