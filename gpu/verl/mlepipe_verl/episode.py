"""One ReAct episode on a task, driven by any model: the loop of
agents/scaffolds/react in Python, with code executed by the sandbox service.
Limits: the turn limit T_max, the per-step timeout τ_max, the episode's time
budget and the context budget (pruning as mlepipe prunes)."""

import asyncio
import time

from .react import failed_turn, fit_context, parse_reply

HEAD = 2  # system prompt and task description: never pruned


async def run_episode(model, service, task_id, messages, limits):
    """`model(shown_messages, turn)` returns the reply's text; `model.observed(messages)`
    is told of each observation appended. Returns the episode record mlepipe grades."""
    call = lambda f, *a: asyncio.get_running_loop().run_in_executor(None, f, *a)  # noqa: E731
    started = time.monotonic()
    messages = [dict(m) for m in messages]
    turns, dropped, submission, ended, error = [], 0, None, "max_turns", None
    session = await call(service.open, task_id)
    for t in range(limits["max_turns"]):
        left_ms = limits["time_budget_ms"] - (time.monotonic() - started) * 1000
        if left_ms < 1000:
            ended = "time_budget"
            break
        shown, d = fit_context(messages, HEAD, [failed_turn(x) for x in turns], limits["context_tokens"])
        dropped = max(dropped, d)
        try:
            text = await model(shown, t)
        except Exception as err:  # the agent's failure ends its episode; it is recorded, not raised
            ended, error = "policy_error", str(err)
            break
        messages.append({"role": "assistant", "content": text})
        action, format_ok = parse_reply(text)
        base = {"turn": t, "format_ok": format_ok, "exit_code": None, "timed_out": False, "duration_ms": 0}
        if action["kind"] == "answer":
            submission = action["path"]
            turns.append({**base, "action": "answer", "observation": f"submitted {action['path']}"})
            ended = "answer"
            break
        if action["kind"] == "invalid":
            obs = f"format error: {action['reason']}"
            turns.append({**base, "action": "invalid", "observation": obs})
        elif action["kind"] == "validate":
            t0 = time.monotonic()
            obs = await call(service.validate, session, action["path"])
            turns.append(
                {**base, "action": "validate", "observation": obs, "duration_ms": int((time.monotonic() - t0) * 1000)}
            )
        else:
            timeout_ms = int(min(limits["step_timeout_ms"], left_ms))
            r = await call(service.run, session, action["code"], t, timeout_ms)
            obs = r["observation"]
            turns.append(
                {
                    **base,
                    "action": "code",
                    "code": action["code"],
                    "observation": obs,
                    "exit_code": None if r["timed_out"] else r["exit_code"],
                    "timed_out": r["timed_out"],
                    "duration_ms": r["duration_ms"],
                }
            )
        messages.append({"role": "user", "content": obs})
        model.observed(messages)
    # Out of turns or time without an answer: the last submission written is graded, as in mlepipe.
    return {
        "session": session,
        "task_id": task_id,
        "scaffold": "react",
        "messages": messages,
        "turns": turns,
        "submission": submission or "submission.csv",
        "ended": ended,
        "error": error,
        "dropped_turns": dropped,
    }


async def run_served_episode(model, service, route, opened, task_id, wait_s=None):
    """One episode the sandbox service runs with its scaffold (gpu/verl/service-mlab.ts: mlab, or
    ReAct in the release's format, `route` naming it) and whose every request it hands here. A step
    is sampled into the token record; an mlab AI action's question (edit, understand, reflect,
    retrieve) is sampled outside it. `opened` is the service's answer to /ROUTE/open; a reply waits
    up to `wait_s` for the action to run. Returns the episode record mlepipe grades."""
    call = lambda f, *a: asyncio.get_running_loop().run_in_executor(None, f, *a)  # noqa: E731
    session, event = opened["session"], opened
    while "done" not in event:
        req = event["request"]
        text, error = None, None
        try:
            if req["kind"] == "step":
                # The transcript ends with the observation of the last action: the record takes its tokens.
                if len(req["transcript"]) > len(model.messages):
                    model.observed(req["transcript"])
                text = await model(req["messages"], req["turn"])
            else:
                text = await model.side(req["messages"])
        except Exception as err:  # the scaffold records the failure as mlepipe's does: a step's ends the episode, an action's fails the action
            error = str(err) or type(err).__name__
        event = await call(service.served_reply, route, session, text, error, wait_s)
    return {
        **event["done"],
        "session": session,
        "task_id": task_id,
        "submission": event["done"].get("submission") or "submission.csv",
    }


def unknown_ending(rule, episode, max_turns):
    """timeout_rule: release masks an ending the release cannot name (agents/grpo/advantages.ts,
    unknownEnding): a reply that both called a tool and answered leaves a tool response last. On the
    last call the release names it "token_limit_no_answer" and keeps it; a tool response that itself
    holds <answer> reads as an answer."""
    turns = episode["turns"]
    last = turns[-1] if turns else None
    if rule != "release" or episode["ended"] != "answer" or last is None or last["action"] == "answer":
        return False
    index = last.get("turn", len(turns) - 1)
    if index + 1 >= max_turns:
        return False
    messages = episode.get("messages") or []
    return not (messages and "<answer>" in messages[-1].get("content", ""))


def timed_out_under(rule, episode):
    """mlepipe's timeout rules (agents/grpo/advantages.ts): any-step, last-step, fraction:F or release."""
    if episode["ended"] == "time_budget":
        return True
    if rule == "release":
        # The released SandMLE code: a failed model call ends as a timeout; otherwise strictly more than
        # a fifth of the tool responses (every turn but an answer) were execution timeouts.
        if episode["ended"] == "policy_error":
            return True
        # What the release counts is in the conversation it ends with: replies its pruning removed are not.
        kept = [t for t in episode["turns"] if not t.get("pruned")]
        responses = sum(1 for t in kept if t.get("tool_response", t["action"] != "answer"))
        timeouts = sum(1 for t in kept if t["action"] == "code" and t["timed_out"])
        return responses > 0 and timeouts / responses > 0.2
    runs = [t for t in episode["turns"] if t["action"] == "code"]
    if not runs:
        return False
    if rule == "any-step":
        return any(t["timed_out"] for t in runs)
    if rule == "last-step":
        return episode["turns"][-1]["action"] == "code" and runs[-1]["timed_out"]
    share = float(rule[len("fraction:") :])
    return sum(1 for t in runs if t["timed_out"]) / len(runs) >= share
