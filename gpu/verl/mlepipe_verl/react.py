"""The ReAct scaffold's rules, the same as agents/scaffolds/react/ in mlepipe:
reading a reply into one action, and pruning the context when it grows past
the budget. They must stay in step with the TypeScript: the reward of an
exported trajectory is compared with mlepipe's own in the tests."""

import re

_THINK = re.compile(r"<think>[\s\S]*?</think>")
_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n([\s\S]*?)```")
_ANSWER = re.compile(r"<answer>\s*([^<]*?)\s*</answer>")
_VALIDATE = re.compile(r"<validate>\s*([^<]*?)\s*</validate>")


def parse_reply(text):
    """One action out of a reply, and whether its format earns the format reward."""
    think = bool(_THINK.search(text))
    rest = _THINK.sub("", text)
    blocks = _BLOCK.findall(rest)
    answers = _ANSWER.findall(rest)
    validates = _VALIDATE.findall(rest)
    count = len(blocks) + len(answers) + len(validates)
    if count == 0:
        action = {
            "kind": "invalid",
            "reason": "the reply holds no action: end it with one ```python block, <validate>submission.csv</validate> or <answer>submission.csv</answer>",
        }
    elif count > 1:
        action = {"kind": "invalid", "reason": f"the reply holds {count} actions; give exactly one per turn"}
    elif blocks:
        action = {"kind": "code", "code": blocks[0]}
    elif answers:
        action = (
            {"kind": "answer", "path": answers[0]}
            if answers[0]
            else {"kind": "invalid", "reason": "<answer> names no file"}
        )
    else:
        action = (
            {"kind": "validate", "path": validates[0]}
            if validates[0]
            else {"kind": "invalid", "reason": "<validate> names no file"}
        )
    return action, think and count == 1 and action["kind"] != "invalid"


def _utf16_len(s):
    # JavaScript counts string length in UTF-16 code units; the budget must match mlepipe's.
    return len(s.encode("utf-16-le")) // 2


def approx_tokens(messages):
    chars = sum(_utf16_len(m["content"]) + 8 for m in messages)
    return -(-chars // 4)


def fit_context(messages, head, failed, budget):
    """What the policy is shown and how many turns were hidden: failed turns
    first, oldest first, then the oldest of any kind; the head (system prompt,
    task) and the latest turn always stay."""
    turns = []
    for t, i in enumerate(range(head, len(messages), 2)):
        turns.append((t, messages[i : i + 2], failed[t] if t < len(failed) else False))
    keep = {t for t, _, _ in turns}

    def build():
        return list(messages[:head]) + [m for t, msgs, _ in turns if t in keep for m in msgs]

    shown = build()
    older = turns[:-1]
    for t, _, _ in [x for x in older if x[2]] + [x for x in older if not x[2]]:
        if approx_tokens(shown) <= budget:
            break
        keep.discard(t)
        shown = build()
    return shown, len(turns) - len(keep)


def failed_turn(turn):
    return turn["action"] == "invalid" or (turn["action"] == "code" and (turn["timed_out"] or turn["exit_code"] != 0))
