"""Supervised fine-tuning on chat conversations: next-token loss on the
assistant's tokens only (system, user and observation tokens are context).

A conversation is rendered once with the tokenizer's own chat template and
tokenised as a whole; which tokens carry loss is decided by character
spans. Each assistant message's content is found in the rendered text, in
order, and its span extended over the end-of-turn token that the template
writes right after it (so the model learns to stop). A token carries loss
when its characters overlap an assistant span. Searching the content,
rather than rendering prefixes of the conversation, also works for templates
that render earlier turns differently from the last one: where a template
trims a reply or drops the reasoning block of earlier turns (Qwen3's does),
the part it renders is what carries loss; where it keeps the reasoning but
rewrites it (Qwen3's last reply, as "<think>\n…\n</think>\n\n"), the block as
rendered carries loss with the reply.

The loss is the mean negative log-likelihood over every loss token of the
whole batch (token-mean); micro-batches are normalised by the batch's token
count, so the step's gradient does not depend on the micro-batch size.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Sequence as Seq

import torch

from .model import Policy
from .update import Sequence, _pad_id, _sync, collate, token_logprobs


class ConversationError(ValueError):
    """A conversation the worker cannot turn into a training sequence; `index` is its place in the request."""

    def __init__(self, index: int, message: str):
        super().__init__(f"examples.{index}: {message}")
        self.index = index
        self.message = message


@dataclass
class Example:
    input_ids: list[int]
    loss_mask: list[int]
    # Tokens cut off the end to fit max_length.
    truncated: int


def _find_content(text: str, content: str, cursor: int) -> tuple[int, int] | None:
    """Where `content` is rendered from `cursor` on: as it is, stripped of surrounding whitespace (templates that
    trim), or only its part after a reasoning block (templates that drop the reasoning of earlier turns, as
    Qwen3's does); None for empty content, (-1, -1) when it is nowhere."""
    tries = [content, content.strip()]
    if "</think>" in content:
        tries.append(content.rsplit("</think>", 1)[1].strip())
    for k, piece in enumerate(tries):
        if not piece:
            return None
        at = text.find(piece, cursor)
        if at >= 0:
            # Found after its reasoning: where the template kept the reasoning but rewrote it (Qwen3 renders the
            # last turn's as "<think>\n…\n</think>\n\n"), the reasoning as rendered is part of the reply.
            return (_rendered_reasoning(text, cursor, at) if k == 2 else at), at + len(piece)
    return -1, -1


def _rendered_reasoning(text: str, cursor: int, at: int) -> int:
    """The start of a <think>…</think> block that the template wrote right before `at` (only whitespace
    between), else `at`."""
    start = text.rfind("<think>", cursor, at)
    if start < 0:
        return at
    close = text.find("</think>", start, at)
    return start if close >= 0 and not text[close + len("</think>") : at].strip() else at


def assistant_spans(text: str, messages: Seq[dict[str, Any]], ends: Seq[str]) -> list[tuple[int, int]]:
    """Character spans of the assistant replies in the rendered conversation, each with the end-of-turn token
    (one of `ends`, the tokenizer's special tokens) that the template writes right after it."""
    spans, cursor = [], 0
    for i, m in enumerate(messages):
        found = _find_content(text, m["content"], cursor)
        if found is None:
            continue
        if found[0] < 0:
            raise ValueError(
                f"messages.{i}: its content does not appear in the chat template's rendering (the template changes it)"
            )
        at, end = found
        if m["role"] == "assistant":
            end += next((len(t) for t in ends if text.startswith(t, end)), 0)
            spans.append((at, end))
        cursor = end
    return spans


def tokenize_conversation(tokenizer, messages: Seq[dict[str, Any]], max_length: int) -> Example:
    """Token ids and the assistant-only loss mask of one conversation, cut to max_length tokens."""
    if not any(m["role"] == "assistant" for m in messages):
        raise ValueError("has no assistant message: nothing to learn from")
    text = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=False)
    enc = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    # The eos token first; a base model's template may close a turn with another special token (<|im_end|>).
    ends = [t for t in [tokenizer.eos_token, *tokenizer.all_special_tokens] if t]
    spans = assistant_spans(text, messages, ends)
    mask = [int(any(s < hi and e > lo for lo, hi in spans)) for s, e in enc["offset_mapping"]]
    if mask:
        # The first token has no context to be predicted from.
        mask[0] = 0
    cut = max(0, len(ids) - max_length)
    return Example(input_ids=ids[:max_length], loss_mask=mask[:max_length], truncated=cut)


def tokenize_examples(tokenizer, conversations: Seq[Seq[dict[str, Any]]], max_length: int) -> list[Example]:
    out = []
    for i, messages in enumerate(conversations):
        try:
            out.append(tokenize_conversation(tokenizer, messages, max_length))
        except ValueError as err:
            raise ConversationError(i, str(err)) from None
    return out


def _sequences(examples: Seq[Example]) -> list[Sequence]:
    # Examples left with no loss token (a reply cut off entirely) only cost compute.
    return [
        Sequence(input_ids=e.input_ids, loss_mask=e.loss_mask, advantages=0.0)
        for e in examples
        if len(e.input_ids) >= 2 and any(e.loss_mask)
    ]


def _counts(examples: Seq[Example], seqs: Seq[Sequence]) -> dict[str, int]:
    return {
        "sequences": len(seqs),
        "tokens": sum(len(s.input_ids) for s in seqs),
        "loss_tokens": sum(sum(s.loss_mask) for s in seqs),
        "truncated": sum(1 for e in examples if e.truncated),
        "truncated_tokens": sum(e.truncated for e in examples),
        "without_loss": len(examples) - len(seqs),
    }


def _nll_sum(policy: Policy, part: Seq[Sequence]) -> torch.Tensor:
    b = collate(part, _pad_id(policy), policy.device)
    logp, _ = token_logprobs(policy.model, b["input_ids"], b["attention_mask"])
    return -(logp * b["loss_mask"]).sum()


def sft_step(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    examples: Seq[Example],
    *,
    lr: float,
    micro_batch_size: int = 1,
    max_grad_norm: float | None = 1.0,
) -> dict[str, Any]:
    """One optimiser step on the mean assistant-token NLL of `examples` (gradient accumulated over micro-batches)."""
    seqs = _sequences(examples)
    counts = _counts(examples, seqs)
    if not seqs:
        return {**counts, "skipped": True, "loss": None, "grad_norm": None}
    n_tok = counts["loss_tokens"]
    _sync(policy.device)
    t0 = time.perf_counter()
    optimizer.zero_grad(set_to_none=True)
    policy.model.train()
    total = 0.0
    for i in range(0, len(seqs), micro_batch_size):
        loss = _nll_sum(policy, seqs[i : i + micro_batch_size]) / n_tok
        loss.backward()
        total += float(loss.detach().item())
    params = policy.trainable_parameters()
    grad_norm = float(
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm if max_grad_norm is not None else math.inf).item()
    )
    if not math.isfinite(grad_norm):
        optimizer.zero_grad(set_to_none=True)
        raise FloatingPointError(
            f"the gradient norm is {grad_norm}: the step was not applied and the weights are unchanged"
        )
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    _sync(policy.device)
    seconds = time.perf_counter() - t0
    return {
        **counts,
        "skipped": False,
        "loss": total,
        "grad_norm": grad_norm,
        "lr": lr,
        "tokens_per_s": counts["tokens"] / seconds if seconds > 0 else None,
    }


@torch.no_grad()
def eval_loss(policy: Policy, examples: Seq[Example], *, micro_batch_size: int = 1) -> dict[str, Any]:
    """The mean NLL per assistant token over `examples` under the current weights (no gradient)."""
    seqs = _sequences(examples)
    counts = _counts(examples, seqs)
    if not seqs:
        return {**counts, "loss": None}
    was_training = policy.model.training
    policy.model.eval()
    try:
        total = sum(
            float(_nll_sum(policy, seqs[i : i + micro_batch_size]).item())
            for i in range(0, len(seqs), micro_batch_size)
        )
    finally:
        policy.model.train(was_training)
    return {**counts, "loss": total / counts["loss_tokens"]}
