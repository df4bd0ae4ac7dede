"""OpenAI-compatible chat completions from the current weights, with the raw
token ids vLLM adds (`prompt_token_ids` on the response, `token_ids` per
choice), so that a rollout records exactly what the policy saw and sampled.

A choice's `token_ids` and `logprobs.content` line up one to one and hold
every sampled token, the end-of-turn token or the token that completed a stop
string included; the message's content is their text without it.
"""

from __future__ import annotations

import time
import uuid
from functools import lru_cache
from typing import Any

from .generate import Group, Sample, chat_prompt_ids, cut_at_stop, generate_groups
from .model import Policy
from .protocol import ChatRequest

# With no max_tokens a reply may use the rest of the model's context, as vLLM and the OpenAI API do: a
# fixed cap (it was 256) cut most Qwen3 replies that think before they act. This one applies only to a
# model whose config names no context length.
FALLBACK_MAX_TOKENS = 4096


@lru_cache(maxsize=1)
def _byte_of_char() -> dict[str, int]:
    """Byte-level BPE writes each byte as one printable character (GPT-2's table); this is its inverse."""
    printable = (
        list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    )
    chars, n = list(printable), 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def token_bytes(tokenizer, token_id: int) -> list[int]:
    """A token's own bytes: exact for byte-level tokenizers, where one token may hold part of a character."""
    if type(tokenizer.backend_tokenizer.decoder).__name__ == "ByteLevel":
        piece = tokenizer.convert_ids_to_tokens(token_id)
        table = _byte_of_char()
        if all(ch in table for ch in piece):
            return [table[ch] for ch in piece]
    return list(tokenizer.decode([token_id]).encode())


def prompt_room(policy: Policy, prompt: list[int], want: int | None) -> int:
    """How many tokens a reply may have: `want`, or the rest of the context when None, never past the context."""
    context = int(getattr(policy.model.config, "max_position_embeddings", 0) or 0)
    if not context:
        return want or FALLBACK_MAX_TOKENS
    return min(want, context - len(prompt)) if want else context - len(prompt)


def _choice(tokenizer, index: int, s: Sample, stops: list[str], logprobs: bool) -> dict[str, Any]:
    ids, lps, finish = s.token_ids, s.logprobs, s.finish_reason
    cut = cut_at_stop(tokenizer, ids, stops)
    if cut is not None:
        n, text = cut
        ids, lps, finish = ids[:n], lps[:n], "stop"
    else:
        ended = finish == "stop" and ids and ids[-1] == tokenizer.eos_token_id
        text = tokenizer.decode(ids[:-1] if ended else ids)
    choice: dict[str, Any] = {
        "index": index,
        "message": {"role": "assistant", "content": text},
        "finish_reason": finish,
        "token_ids": ids,
        "logprobs": None,
    }
    if logprobs:
        content = []
        for t, lp in zip(ids, lps):
            content.append(
                {"token": tokenizer.decode([t]), "logprob": lp, "bytes": token_bytes(tokenizer, t), "top_logprobs": []}
            )
        choice["logprobs"] = {"content": content}
    return choice


def request_group(policy: Policy, req: ChatRequest, cancelled=lambda: False) -> Group:
    """The rows one chat request samples (its `n` replies to its rendered prompt); ValueError when the prompt leaves
    no room to answer."""
    prompt = chat_prompt_ids(policy, [m.model_dump() for m in req.messages])
    room = prompt_room(policy, prompt, req.max_completion_tokens or req.max_tokens)
    if room < 1:
        raise ValueError(f"the prompt has {len(prompt)} tokens and leaves no room to answer in the model's context")
    return Group([prompt] * req.n, room, req.temperature, req.top_p, req.seed, tuple(req.stop_strings()), cancelled)


def completion(policy: Policy, req: ChatRequest, samples: list[Sample], *, model_id: str, step: int) -> dict[str, Any]:
    """The chat.completion object for `req` from its sampled rows."""
    tok = policy.tokenizer
    prompt = samples[0].prompt_ids
    choices = [_choice(tok, i, s, req.stop_strings(), req.logprobs) for i, s in enumerate(samples)]
    used = sum(len(c["token_ids"]) for c in choices)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.model or model_id,
        "choices": choices,
        "usage": {"prompt_tokens": len(prompt), "completion_tokens": used, "total_tokens": len(prompt) + used},
        "prompt_token_ids": prompt,
        "step": step,
    }


def complete(policy: Policy, req: ChatRequest, *, model_id: str, step: int) -> dict[str, Any]:
    """One request sampled on its own; ValueError when the prompt leaves no room to answer."""
    (samples,) = generate_groups(policy, [request_group(policy, req)])
    return completion(policy, req, samples, model_id=model_id, step=step)
