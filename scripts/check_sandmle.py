"""The Python half of scripts/check-sandmle.sh (see there): SandMLE's released code and mlepipe on the same replies.

    check_sandmle.py tasks SYN                       every scenario's competition in the release's layout under SYN
    check_sandmle.py serve PORT_FILE LOG             the scripted server (and trainer worker) of the mlepipe side
    check_sandmle.py release CHECKOUT SYN OUT LOG    the release's agent loop and reward on each scenario -> OUT
    check_sandmle.py compare RELEASE EVAL GRPOS LOG  trajectory by trajectory against the eval node's output
                                                     folder EVAL and the grpo nodes' GRPOS (a line `id<TAB>folder`
                                                     each); exit 1 on any mismatch

The scenarios are in sandmle_scenarios.py, the release side in sandmle_release.py (what is loaded and what is
replaced is said there), the server in sandmle_replay.py.

Compared per trajectory, against the eval node's and the grpo node's record of the same scenario: the replies
asked for, the reward, the format rate, every turn's tool response (none for a reply the release answers with
none), the ending (the release's termination string), the count of execution timeouts and, for grpo, the
termination reason after the release's timeout rule and whether the trajectory is masked in training.

Normalised before observations are compared, since they must differ (nothing else is):
- the release's run folder (DEEPRESEARCH_OUTPUT_DIR/<id>/<timestamp>/) in front of a path is removed, so its
  `<run folder>/submission.csv` reads `submission.csv`; so is mlepipe's working folder, the jail's `/workspace/`
  or the process backend's `mlepipe-ws-*` folder, the agent's own counterpart of that run folder;
- the script's own traceback frames, `File "<run folder>/main_<timestamp>.py"` in the release and the
  sandbox's script path in mlepipe, read `File "<script>"`.
"""

import glob
import json
import math
import os
import re
import sys

from sandmle_scenarios import scenarios

# mlepipe's endings and the release's termination strings (deepresearch_agent.py, MultiTurnReactAgent._run).
ENDINGS = {"max_turns": "token_limit_no_answer", "time_budget": "timeout", "policy_error": "timeout"}
SCRIPT_FRAME = re.compile(r'File "[^"]*?(?:main_\d{8}-\d{6}-\d{6}|step_\d+|turn_\d+|main)\.py"')


# The agent's working folder in mlepipe: the jail's, or a process backend's workspace.
MLEPIPE_WORKSPACE = re.compile(r"(?<![\w/])(?:/workspace|/[^\s'\"]*/mlepipe-ws-[^/\s'\"]+)/")


def normalise(text: str | None, run_dir: str | None = None) -> str | None:
    """An observation with the parts that must differ between the two sides made equal (see the header):
    the release's side with its run folder, mlepipe's without one."""
    if text is None:
        return None
    text = SCRIPT_FRAME.sub('File "<script>"', text)
    if run_dir:
        return text.replace(run_dir.rstrip("/") + "/", "")
    return MLEPIPE_WORKSPACE.sub("", text)


def mlepipe_ending(traj: dict, max_calls: int) -> str:
    """The release's termination string for an mlepipe trajectory, by the release's own rule from its record."""
    turns = traj.get("turns") or []
    if traj.get("ended") == "answer":
        if turns and turns[-1].get("action") == "answer":
            return "answer"
        # The release looks for the answer in the last message and, after a tool response, finds none: the
        # ending is unknown, or out of calls when that reply was the last one allowed.
        return "token_limit_no_answer" if len(turns) >= max_calls else "answer not found"
    return ENDINGS.get(traj.get("ended"), f"mlepipe:{traj.get('ended')}")


def mlepipe_reason(traj: dict, batch: dict | None, max_calls: int) -> str:
    """The release's TerminationReason value for a grpo trajectory and its batch entry."""
    why = (batch or {}).get("mask_reason")
    if why == "timed_out":
        return "timeout"
    if why == "unknown":
        return "unknown"
    ending = mlepipe_ending(traj, max_calls)
    return {
        "answer": "env_done",
        "token_limit_no_answer": "max_response_length_exceeded",
        "timeout": "timeout",
        "answer not found": "unknown",
    }.get(ending, ending)


def same_number(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=0, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))


def first_difference(a: str | None, b: str | None) -> str:
    if a is None or b is None:
        return f"release {'none' if a is None else repr(a[:200])}; mlepipe {'none' if b is None else repr(b[:200])}"
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    lo = max(0, i - 60)
    return f"at character {i}: release {a[lo : i + 80]!r}; mlepipe {b[lo : i + 80]!r}"


def observations(rel: dict, traj: dict) -> tuple[int, int, list[str]]:
    """Turn by turn: (agreeing, compared, problems)."""
    turns = traj.get("turns") or []
    ours = [t.get("observation") if t.get("tool_response") else None for t in turns]
    theirs = rel["observations"]
    problems, agree = [], 0
    for i in range(max(len(ours), len(theirs))):
        a = normalise(theirs[i], rel["run_dir"]) if i < len(theirs) else "<no such turn>"
        b = normalise(ours[i]) if i < len(ours) else "<no such turn>"
        if a == b:
            agree += 1
        else:
            problems.append(f"turn {i}: {first_difference(a, b)}")
    return agree, max(len(ours), len(theirs)), problems


def compare_one(rel: dict, traj: dict | None, batch: dict | None, grpo: bool) -> tuple[dict, list[str]]:
    """Which fields agree for one trajectory, and the mismatches in words."""
    if traj is None:
        return {}, ["no trajectory (its node failed or did not run: see the run's output above)"]
    fields = {
        "replies": (rel["requests"], len(traj.get("turns") or [])),
        "reward": (rel["reward"], traj.get("reward")),
        "format rate": (rel["format"], (traj.get("variables") or {}).get("format")),
        "ending": (rel["termination"], mlepipe_ending(traj, rel["max_calls"])),
        "timeouts": (rel["timeouts"], sum(bool(t.get("timed_out")) for t in traj.get("turns") or [])),
    }
    if grpo:
        fields["termination reason"] = (rel["termination_reason"], mlepipe_reason(traj, batch, rel["max_calls"]))
        fields["masked"] = (rel["masked"], (batch or {}).get("masked"))
    ok, problems = {}, []
    for name, (a, b) in fields.items():
        numeric = name in ("reward", "format rate")
        ok[name] = same_number(a, b) if numeric else a == b
        if not ok[name]:
            problems.append(f"{name}: release {a!r}, mlepipe {b!r}")
    agree, total, obs = observations(rel, traj)
    ok["observations"] = (agree, total)
    return ok, problems + obs


def read_jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def by_task(rows: list[dict]) -> dict[str, dict]:
    return {r["task_id"]: r for r in rows}


def report(side: str, release: list[dict], trajs: dict, batches: dict | None) -> int:
    """Prints one side's counts and mismatches; returns the number of mismatches."""
    counts: dict[str, int] = {}
    obs_agree = obs_total = mismatches = 0
    lines = []
    for rel in release:
        ok, problems = compare_one(rel, trajs.get(rel["id"]), (batches or {}).get(rel["id"]), batches is not None)
        for name, v in ok.items():
            if name != "observations":
                counts[name] = counts.get(name, 0) + int(v)
        a, t = ok.get("observations", (0, 0))
        obs_agree, obs_total = obs_agree + a, obs_total + t
        mismatches += len(problems)
        lines += [f"  {rel['id']}: {p}" for p in problems]
    agreed = "; ".join(f"{n} agree on {k}" for k, n in counts.items())
    print(f"{side}: {len(release)} trajectories: {agreed}; {obs_agree} of {obs_total} observations agree")
    for line in lines:
        print(line)
    return mismatches


def grpo_batches(log_path: str) -> dict[str, dict]:
    out = {}
    for entry in read_jsonl(log_path):
        if entry.get("kind") == "update":
            out.update({t["task_id"]: t for t in entry["trajectories"]})
    return out


def grpo_trajectories(listing: str) -> dict[str, dict]:
    """Each scenario's grpo trajectory; the listing has a line `id<TAB>output folder` per node (empty: it failed)."""
    out = {}
    with open(listing, encoding="utf-8") as f:
        for line in f:
            cid, _, folder = line.rstrip("\n").partition("\t")
            for step in sorted(glob.glob(os.path.join(folder, "steps", "step_*.jsonl")) if folder else [])[:1]:
                out.update(by_task(read_jsonl(step)))
    return out


def compare(release_path: str, eval_out: str, grpo_listing: str, log_path: str) -> int:
    with open(release_path, encoding="utf-8") as f:
        release = json.load(f)
    missing = set(scenarios()) - {r["id"] for r in release}
    if missing:
        print(f"check-sandmle: the release side lacks {sorted(missing)}")
        return 1
    trajectories = os.path.join(eval_out, "trajectories.jsonl")
    evals = by_task(read_jsonl(trajectories)) if eval_out and os.path.exists(trajectories) else {}
    grpos = grpo_trajectories(grpo_listing)
    bad = report("eval", release, evals, None) + report("grpo", release, grpos, grpo_batches(log_path))
    print(f"check-sandmle: {bad} mismatches" if bad else "check-sandmle: everything agrees")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    cmd, args = argv[0], argv[1:]
    if cmd == "tasks":
        from sandmle_scenarios import write_tasks

        write_tasks(args[0])
        return 0
    if cmd == "serve":
        from sandmle_replay import main as serve

        serve(*args)
        return 0
    if cmd == "release":
        from sandmle_release import main as release

        release(*args)
        return 0
    if cmd == "compare":
        return compare(*args)
    if cmd == "scenarios":
        json.dump(scenarios(), sys.stdout)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
