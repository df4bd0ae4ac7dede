"""SPICE (MLToolBench Eq. 1) and TIPS inside verl's agent loop, scored by the
rollout servers on the weights that sampled the episode (π_old).

After an episode, each tool call the sandbox service found in it (its
/shaping/plan: which replies are calls, where the call sits in the reply, the
history before it, and the step's references from the solution bank) is
teacher-forced twice or more through the server manager: after the plain
history, and after the history with one reference message. Both branches are
rendered by verl's own token builder (the chat template with its generation
prompt), then the reply's sampled token ids are appended as they came from the
sampler, never re-tokenised text. The servers' prompt log-probabilities
(`prompt_logprobs`, the interface verl's distillation teacher reads) give
log q(a_u | context, a_<u) for each call token. Rendering both branches the
same way keeps the difference to the reference alone, as mlepipe's own trainer
path does.

d = 1/(K|a|) Σ_k Σ_u [log q(a_u | h, c_k, a_<u) − log q(a_u | h, a_<u)], the
formula of agents/shaping/spice.ts (turn-credit.test.ts compares the two). A
reference branch longer than the servers' context keeps its history and call
whole and has only its summary cut, to the longest prefix of whole words that
fits (MLToolBench App. D.2; the plan's reference_summaries and reference_frame
rebuild the message around a cut summary); one of which not a word fits is left
out of the mean. When the plain branch overflows, or no reference fits, or the
task has no reference, the call is unscored (null, zero shaping), with the
reason counted.

TIPS takes the same path with its potential: the references are scored as a
reply after the history and a request (tips_scores), before each call and
after its observation."""

import re
from uuid import uuid4

from .turn_credit import turn_spans

# One token is generated and thrown away; only the prompt's log-probabilities are read.
SCORE_PARAMS = {"max_tokens": 1, "temperature": 1.0, "prompt_logprobs": 0, "detokenize": False}


def token_span(tokenizer, ids, start, end):
    """The [a, b) of `ids` whose decoded text covers the characters [start, end) of the
    decoded reply: a token that straddles `start` counts, one that starts at or after `end`
    does not (agents/shaping/types.ts spanTokens). Found by bisection over decoded prefixes."""

    def chars(n):
        return len(tokenizer.decode(ids[:n], skip_special_tokens=True))

    def first_past(limit):  # the smallest n with chars(n) > limit
        lo, hi = 0, len(ids)
        while lo < hi:
            mid = (lo + hi) // 2
            if chars(mid) > limit:
                hi = mid
            else:
                lo = mid + 1
        return lo

    a = max(0, first_past(start) - 1)
    b = first_past(end - 1) if end > start else a
    return (a, b) if b > a else (0, 0)


async def call_logprobs(server, context_ids, reply_ids, span, max_len):
    """log q of reply_ids[a:b] after context_ids + reply_ids[:a], or None when the sequence
    does not fit the servers' context."""
    a, b = span
    seq = list(context_ids) + list(reply_ids[:b])
    if len(seq) > max_len:
        return None
    out = await server.generate(request_id=uuid4().hex, prompt_ids=seq, sampling_params=dict(SCORE_PARAMS))
    fields = out.extra_fields or {}
    lps, ids = fields.get("prompt_logprobs"), fields.get("prompt_ids")
    if lps is None or ids is None:
        raise RuntimeError(
            "the rollout server returned no prompt log-probabilities (prompt_logprobs): it cannot score turns"
        )
    first = len(context_ids) + a
    # Entry j holds the log-probability of seq[j + 1] given seq[: j + 1] (verl's extract_prompt_logprobs).
    for j in range(first, len(seq)):
        if int(ids[j - 1][0]) != int(seq[j]):
            raise RuntimeError(f"the server scored token {ids[j - 1][0]} at position {j}, not the sampled {seq[j]}")
    return [float(lps[j - 1][0]) for j in range(first, len(seq))]


def cut_reference(builder, history, reply_ids, span, max_len, summary, frame):
    """The context of a reference branch whose message holds the longest word prefix of
    `summary` that fits max_len with the call (the history kept whole), or None when not one
    word fits. Bisection over the words, each try only rendered and counted, as call_logprobs
    counts; the full summary is known not to fit."""
    ends = [m.end() for m in re.finditer(r"\S+", summary)]
    lo, hi, best = 0, len(ends), None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        message = {"role": "user", "content": frame[0] + summary[: ends[mid - 1]].strip() + frame[1]}
        context = builder.build_initial_tokens(history + [message])
        if len(context) + span[1] <= max_len:
            lo, best = mid, context
        else:
            hi = mid
    return best


async def reference_logprobs(server, builder, plan, history, reply_ids, span, max_len):
    """log q of the call after each reference that fits, a cut one where the plan lets it be
    cut, and how many were cut."""
    summaries, frame = plan.get("reference_summaries") or [], plan.get("reference_frame")
    conditioned, cut = [], 0
    for k, ref in enumerate(plan.get("references") or []):
        lp = await call_logprobs(server, builder.build_initial_tokens(history + [ref]), reply_ids, span, max_len)
        if lp is None and frame and k < len(summaries):
            context = cut_reference(builder, history, reply_ids, span, max_len, summaries[k], frame)
            lp = None if context is None else await call_logprobs(server, context, reply_ids, span, max_len)
            cut += lp is not None
        if lp is not None:
            conditioned.append(lp)
    return conditioned, cut


def spice_d(conditioned, plain):
    """Eq. 1 over the references that fit: the mean of per-token differences, averaged over references."""
    means = [sum(x - p for x, p in zip(lp, plain, strict=True)) / len(plain) for lp in conditioned]
    return sum(means) / len(means)


def tips_potential(per_summary):
    """Φ(h): each summary's mean token log-probability, averaged over summaries (agents/shaping/tips.ts)."""
    return sum(sum(lp) / len(lp) for lp in per_summary) / len(per_summary)


async def tips_scores(server, builder, tokenizer, plan, max_len):
    """TIPS on each call: Φ after its observation minus Φ before the call, Φ(h) the likelihood of the
    references after h and the plan's request. The references are text written by the bank, not
    sampled, so they are tokenised here. One potential per history length, shared by neighbouring calls."""
    summaries = plan.get("summaries") or []
    calls = plan.get("calls", [])
    if not summaries:
        return [{"turn": c["turn"], "category": c["category"], "d": None, "reason": "no-reference"} for c in calls]
    encoded = [tokenizer.encode(t, add_special_tokens=False) for t in summaries]
    potentials = {}

    async def potential(history):
        key = len(history)
        if key not in potentials:
            context = builder.build_initial_tokens(history + [plan["request"]])
            rows = [await call_logprobs(server, context, ids, (0, len(ids)), max_len) for ids in encoded]
            potentials[key] = None if any(r is None or not r for r in rows) else tips_potential(rows)
        return potentials[key]

    out = []
    for c in calls:
        before, after = await potential(c["history"]), await potential(c["after"])
        base = {"turn": c["turn"], "category": c["category"]}
        out.append(
            {**base, "d": None, "reason": "overflow"}
            if before is None or after is None
            else {**base, "d": after - before}
        )
    return out


async def score_episode(server, builder, tokenizer, record, plan, max_len):
    """One TurnScore per call of the plan: {turn, category, d, reason?}. `record` is the
    episode's token record (models.TokenRecord); a reply outside it (after context pruning
    closed it) is unscored."""
    if plan.get("kind") == "tips":
        return await tips_scores(server, builder, tokenizer, plan, max_len)
    spans = turn_spans(record.mask)
    refs = plan.get("references") or []
    out = []
    for c in plan.get("calls", []):
        base = {"turn": c["turn"], "category": c["category"]}
        if not refs:
            out.append({**base, "d": None, "reason": "no-reference"})
            continue
        # Reply s of the conversation is the s-th run of sampled tokens in the record.
        if c["turn"] >= len(spans):
            out.append({**base, "d": None, "reason": "not-in-record"})
            continue
        s, e = spans[c["turn"]]
        reply_ids = record.response_ids[s:e]
        span = token_span(tokenizer, reply_ids, c["prefix_chars"], c["prefix_chars"] + c["call_chars"])
        if span[1] <= span[0]:
            out.append({**base, "d": None, "reason": "no-call-tokens"})
            continue
        history = c["history"]
        plain = await call_logprobs(server, builder.build_initial_tokens(history), reply_ids, span, max_len)
        conditioned, cut = [], 0
        if plain is not None:
            conditioned, cut = await reference_logprobs(server, builder, plan, history, reply_ids, span, max_len)
        if plain is None or not conditioned:
            out.append({**base, "d": None, "reason": "overflow"})
            continue
        out.append({**base, "d": spice_d(conditioned, plain), **({"truncated": cut} if cut else {})})
    return out


def shaping_per_reply(scores, beta, replies):
    """β·d on each reply (0 where unscored or not a call), in reply order: what place_turn_rewards adds."""
    per = [0.0] * replies
    for s in scores:
        if s["d"] is not None and s["turn"] < replies:
            per[s["turn"]] = beta * s["d"]
    return per
