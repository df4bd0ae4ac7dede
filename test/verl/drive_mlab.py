"""Runs an agent loop the sandbox service serves the scaffold of (mlab, or ReAct in
the release's format) from an export (built from its agent_loop.yaml as verl's
agent-loop workers build it) on one task against a running `mlepipe sandbox serve
--export`, with the tests' rollout server (gpu/verl/tests/harness.py: scripted
replies as exact token ids, in call order) and a tokenizer trained under Qwen3's
real template; grades the episode with the export's reward function and prints
one JSON line of what the record holds.

    python drive_mlab.py EXPORT_DIR TASK_ID REPLIES_JSON [AGENT_NAME]"""

import asyncio
import json
import os
import sys

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gpu", "verl", "tests")
sys.path.insert(0, TESTS)

from harness import Server, train_tokenizer  # noqa: E402


def runs(tok, ids, mask, want):
    """The decoded runs of consecutive tokens whose mask is `want`."""
    out, cur = [], []
    for i, m in zip(ids, mask):
        if m == want:
            cur.append(i)
        elif cur:
            out.append(tok.decode(cur, skip_special_tokens=True)), cur.clear()
    if cur:
        out.append(tok.decode(cur, skip_special_tokens=True))
    return out


def served_loop(config, tok, server, name):
    """The export's agent loop `name`, as verl's agent loop manager builds it, sampling from `server`."""
    from hydra.utils import instantiate
    from omegaconf import OmegaConf
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap

    entry = {e.name: e for e in OmegaConf.load(config.actor_rollout_ref.rollout.agent.agent_loop_config_path)}[name]
    return instantiate(
        entry,
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=tok,
        processor=None,
        hf_model_type="qwen3",
        dataset_cls=None,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap([]),
    )


def main(export_dir, task_id, replies, name="mlepipe_mlab"):
    import yaml
    from omegaconf import OmegaConf

    os.chdir(export_dir)
    sys.path.insert(0, export_dir)
    from mlepipe_verl.config import compose
    from mlepipe_verl.service import SandboxService

    with open("trainer_overrides.yaml", encoding="utf-8") as f:
        config = compose(yaml.safe_load(f)["overrides"])
    OmegaConf.set_struct(config, False)
    # The tests' tokenizer spends more tokens on the prompt than a real one: room for the whole episode.
    config.actor_rollout_ref.rollout.prompt_length, config.actor_rollout_ref.rollout.response_length = 16384, 32768
    tok = train_tokenizer("qwen3")
    server = Server(tok, replies)
    loop = served_loop(config, tok, server, name)

    seen = {"first": None, "asks": []}

    class Recording(SandboxService):
        def served_open(self, *a, **k):
            opened = super().served_open(*a, **k)
            seen["first"] = opened["request"]["transcript"]
            return opened

        def served_reply(self, *a, **k):
            event = super().served_reply(*a, **k)
            if event.get("request", {}).get("kind") == "ask":
                seen["asks"].append(len(server.given))
                seen.setdefault("questions", []).append(event["request"]["messages"])
            return event

    loop.service = Recording(os.environ["MLEPIPE_SANDBOX_URL"])
    out = asyncio.run(
        loop.run(
            {"temperature": 1.0},
            raw_prompt=[{"role": "user", "content": "(sized only)"}],
            extra_info={"task_id": task_id, "split": "train"},
        )
    )
    from verl.utils.import_utils import load_extern_object

    fn = load_extern_object(module_path="reward_fn.py", object_name="compute_score")
    scored = fn(
        data_source="mlepipe",
        solution_str="",
        ground_truth=task_id,
        extra_info={"task_id": task_id, "split": "train", **out.extra_fields},
    )
    episode = out.extra_fields["mlepipe_episode"]
    builder = loop.continuous_token_builder
    k = seen["asks"][0] if seen["asks"] else None
    print(
        json.dumps(
            {
                "turns": [[t["action"], t.get("name")] for t in episode["turns"]],
                "ended": episode["ended"],
                "reward": scored["score"],
                "valid": scored.get("mlepipe_valid"),
                "variables": {k[len("mlepipe_") :]: v for k, v in scored.items() if k.startswith("mlepipe_")},
                "timed_out": out.extra_fields["mlepipe_timed_out"],
                "unknown_ending": out.extra_fields["mlepipe_unknown_ending"],
                "masked": not any(out.response_mask),
                "observations": [t["observation"] for t in episode["turns"]],
                "prompt_is_first_transcript": list(out.prompt_ids) == list(builder.build_initial_tokens(seen["first"])),
                "record_replies": runs(tok, out.response_ids, out.response_mask, 1),
                "side_prompt_is_question_alone": k is not None
                and server.given[k] == list(builder.build_initial_tokens(seen["questions"][0])),
                "sampled": len(server.given),
                "observations_in_record": runs(tok, out.response_ids, out.response_mask, 0),
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), *sys.argv[4:])
