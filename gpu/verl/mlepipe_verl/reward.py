"""The reward function for verl (`reward.custom_reward_function`): the sandbox
service grades the episode's submission with the task's evaluator, outside the
jail, and applies the experiment's reward formula to mlepipe's reward
variables, exactly as mlepipe's own rollouts are scored."""

import os

from .service import SandboxService


def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    extra = extra_info or {}
    episode = extra.get("mlepipe_episode")
    if not episode:
        raise ValueError("no mlepipe episode in extra_info: was the row rolled out by the mlepipe_react agent loop?")
    service = SandboxService(os.environ.get("MLEPIPE_SANDBOX_URL") or extra.get("mlepipe_sandbox_url"))
    graded = service.grade(episode["session"], {k: v for k, v in episode.items() if k != "session"})
    out = {"score": float(graded["reward"])}
    # verl logs these beside the score; every row gets the same keys. Prefixed: the
    # variables hold a `score` of their own (the evaluator's metric).
    for k, v in graded["variables"].items():
        out[f"mlepipe_{k}"] = float(v)
    return out
