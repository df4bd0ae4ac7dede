"""From a GRPO batch (protocol.Batch) to the exact token sequences update.py trains on.

The worker never re-tokenises text: every trajectory that carries loss must
bring, per assistant turn, the context ids the policy saw, the ids it sampled
and their log-probabilities. Turns whose context extends the previous turn's
context and reply (the usual multi-turn conversation: the tokens in between
are the observation) are joined into one sequence with loss mask 0 on the
observation; a turn whose context does not (a scaffold that rewrote or
truncated the history) starts a sequence of its own. Each sampled token gets
the trajectory's advantage, or with advantage_level "turn" its own turn's
entry of turn_advantages (turn-level credit); context tokens carry no loss.
"""

from __future__ import annotations

import math

from .protocol import Batch, Trajectory, Turn
from .update import Sequence

# Sampled log-probabilities are ≤ 0; this much above 0 is float noise.
LOGPROB_SLACK = 1e-4


class BatchError(ValueError):
    """A batch the worker refuses; `loc` names the offending field (e.g. trajectories.2.turns.0.logprobs)."""

    def __init__(self, loc: str, message: str):
        super().__init__(f"{loc}: {message}")
        self.loc = loc
        self.message = message


def check_ids(ids: list[int], vocab: int, loc: str) -> None:
    bad = next((i for i, t in enumerate(ids) if not 0 <= t < vocab), None)
    if bad is not None:
        raise BatchError(f"{loc}.{bad}", f"token id {ids[bad]} is outside the vocabulary (0..{vocab - 1})")


def _check_turn(turn: Turn, vocab: int, loc: str) -> list[int]:
    if not turn.prompt_ids:
        raise BatchError(f"{loc}.prompt_ids", "is empty: the first sampled token needs a context")
    if not turn.token_ids:
        raise BatchError(f"{loc}.token_ids", "is empty: a turn must hold the tokens the policy sampled")
    check_ids(turn.prompt_ids, vocab, f"{loc}.prompt_ids")
    check_ids(turn.token_ids, vocab, f"{loc}.token_ids")
    n = len(turn.token_ids)
    if len(turn.logprobs) != n:
        raise BatchError(f"{loc}.logprobs", f"has {len(turn.logprobs)} entries for {n} sampled tokens")
    bad = next((i for i, x in enumerate(turn.logprobs) if not math.isfinite(x) or x > LOGPROB_SLACK), None)
    if bad is not None:
        raise BatchError(f"{loc}.logprobs.{bad}", f"{turn.logprobs[bad]} is not a log-probability (finite, ≤ 0)")
    mask: list[int] = list(turn.loss_mask) if turn.loss_mask is not None else [1] * n
    if len(mask) != n:
        raise BatchError(f"{loc}.loss_mask", f"has {len(mask)} entries for {n} sampled tokens")
    return mask


def trajectory_sequences(t: Trajectory, index: int, vocab: int, per_turn: bool = False) -> list[Sequence]:
    loc = f"trajectories.{index}"
    if t.turns is None:
        raise BatchError(
            f"{loc}.turns",
            "is missing: an unmasked trajectory must carry its exact token ids (the worker never re-tokenises text)",
        )
    if not t.turns:
        raise BatchError(f"{loc}.turns", "is empty: an unmasked trajectory needs at least one assistant turn")
    replies = sum(1 for m in t.messages if m.role == "assistant")
    if t.messages and replies != len(t.turns):
        raise BatchError(
            f"{loc}.turns", f"has {len(t.turns)} turns but the conversation has {replies} assistant replies"
        )

    if per_turn and len(t.turn_advantages) != len(t.turns):
        raise BatchError(
            f"{loc}.turn_advantages",
            f"has {len(t.turn_advantages)} entries for {len(t.turns)} turns (advantage_level: turn needs one per turn)",
        )
    out: list[Sequence] = []
    ids: list[int] = []
    mask: list[int] = []
    old: list[float] = []
    adv: list[float] = []

    def flush() -> None:
        if ids:
            out.append(
                Sequence(
                    input_ids=list(ids),
                    loss_mask=list(mask),
                    advantages=list(adv) if per_turn else float(t.advantage),
                    old_logprobs=list(old),
                )
            )

    for k, turn in enumerate(t.turns):
        turn_mask = _check_turn(turn, vocab, f"{loc}.turns.{k}")
        if ids and len(turn.prompt_ids) >= len(ids) and turn.prompt_ids[: len(ids)] == ids:
            context = turn.prompt_ids[len(ids) :]
        else:
            flush()
            ids, mask, old, adv = [], [], [], []
            context = turn.prompt_ids
        ids += context
        mask += [0] * len(context)
        old += [0.0] * len(context)
        adv += [0.0] * len(context)
        ids += turn.token_ids
        mask += turn_mask
        old += turn.logprobs
        adv += [float(t.turn_advantages[k]) if per_turn else 0.0] * len(turn.token_ids)
    flush()
    return out


def batch_sequences(batch: Batch, vocab: int) -> list[Sequence]:
    """The sequences of every trajectory that is not masked, in batch order; BatchError names the first problem."""
    seqs: list[Sequence] = []
    for i, t in enumerate(batch.trajectories):
        if not t.masked:
            seqs += trajectory_sequences(t, i, vocab, per_turn=batch.advantage_level == "turn")
    return seqs
