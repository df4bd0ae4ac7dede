"""The worker's one policy in memory and everything that reads or changes its weights.

Every method here runs on the server's single weights thread (server.py), so
sampling, scoring, an optimiser step, saving and loading never overlap: a
rollout never samples from weights half-way through an update.
"""

from __future__ import annotations

import gc
import hashlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import torch

from . import checkpoint
from .batch import BatchError, batch_sequences, check_ids
from .chat import completion, request_group
from .generate import Group, chat_prompt_ids, generate_groups
from .loss import LossConfig
from .model import Policy, load_policy
from .protocol import (
    Batch,
    ChatRequest,
    EvalLossRequest,
    LoadRequest,
    SaveRequest,
    ScoreRequest,
    SftRequest,
    TokenizerIdentity,
)
from .sft import ConversationError, eval_loss, sft_step, tokenize_examples
from .update import Sequence, UpdateConfig, make_optimizer, score, update_step

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerFast

OOM = (torch.OutOfMemoryError, MemoryError)


class HttpError(Exception):
    """An answer other than 200: the status and a JSON body (always with `error`, a sentence)."""

    def __init__(self, status: int, message: str, **extra: Any):
        super().__init__(message)
        self.status = status
        self.body = {"error": message, **extra}


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Worker:
    def __init__(self, policy: Policy, *, model_id: str, ckpt_dir: Path, lr: float = 1e-6, step: int = 0):
        if policy.tokenizer is None:
            raise ValueError("the worker needs a tokenizer: it renders chat messages and checks batches against it")
        self.policy = policy
        self.model_id = model_id
        self.ckpt_dir = ckpt_dir
        self.step = step
        self._identity: dict[str, str] | None = None
        # The optimiser, and with it MasterAdamW's fp32 masters (4 bytes a parameter, 32 GB for 8B), is made at
        # the first step: a worker that only samples or scores never holds it. `_pending` is the checkpoint whose
        # optimiser state that first step starts from.
        self._optimizer: torch.optim.Optimizer | None = None
        self._lr = lr
        self._pending: Path | None = None

    @property
    def tokenizer(self) -> PreTrainedTokenizerFast:
        """The policy's tokenizer, which __init__ (and load, through load_policy) made sure is there."""
        tok = self.policy.tokenizer
        assert tok is not None
        return tok

    # ── identity and health ──────────────────────────────────────────────────

    def identity(self) -> dict[str, str]:
        """sha256 of the tokenizer's compact JSON serialisation (tokenizer.json without indentation) and of its chat template."""
        # Kept: a large vocabulary serialises to megabytes, and every batch is checked against it.
        if self._identity is None:
            tok = self.tokenizer
            self._identity = {
                "tokenizer_sha256": sha256(tok.backend_tokenizer.to_str()),
                "chat_template_sha256": sha256(tok.chat_template or ""),
            }
        return dict(self._identity)

    def health(self) -> dict[str, Any]:
        dev = self.policy.device
        if dev.type == "cuda":
            memory = {"kind": "cuda_max_allocated", "bytes": int(torch.cuda.max_memory_allocated(dev))}
        else:
            import psutil

            memory = {"kind": "rss", "bytes": int(psutil.Process().memory_info().rss)}
        return {
            "status": "ok",
            "step": self.step,
            "model": self.model_id,
            **self.identity(),
            "device": str(dev),
            "dtype": str(self.policy.dtype).removeprefix("torch."),
            "lora": self.policy.lora is not None,
            "gradient_checkpointing": bool(getattr(self.policy.model, "is_gradient_checkpointing", False)),
            "vocab_size": self.vocab_size(),
            "memory": memory,
        }

    def vocab_size(self) -> int:
        return int(self.policy.model.get_input_embeddings().num_embeddings)

    def check_identity(self, given: TokenizerIdentity | None) -> None:
        if given is None:
            return
        mine = self.identity()
        if given.model_dump() != mine:
            raise HttpError(409, "the tokenizer or chat template differs from the worker's: these token ids were made for another tokenisation",
                            given=given.model_dump(), worker=mine)  # fmt: skip

    # ── weights ──────────────────────────────────────────────────────────────

    @property
    def has_optimizer(self) -> bool:
        return self._optimizer is not None

    def optimizer(self) -> torch.optim.Optimizer:
        """The optimiser, made (and given the pending checkpoint's state) on first use."""
        if self._optimizer is None:
            opt = make_optimizer(self.policy, self._lr)
            if self._pending is not None:
                checkpoint.load_optimizer_state(opt, self._pending, self.policy.device)
            self._optimizer, self._pending = opt, None
        return self._optimizer

    def _guard_oom(self, what: str, fn):
        try:
            return fn()
        except OOM as err:
            # Free what the failed call held so that the next request can run.
            if self._optimizer is not None:
                self._optimizer.zero_grad(set_to_none=True)
            self.policy.model.zero_grad(set_to_none=True)
            gc.collect()
            if self.policy.device.type == "cuda":
                torch.cuda.empty_cache()
            raise HttpError(
                507,
                f"out of memory during {what} ({type(err).__name__}); nothing was applied and the model is still usable — send fewer or shorter sequences",
            ) from err

    def chat(self, req: ChatRequest) -> dict[str, Any]:
        """One request on its own (the HTTP service batches through `chat_batch`)."""
        out: list[Any] = []
        self.chat_batch([req], lambda _i, result: out.append(result))
        if isinstance(out[0], HttpError):
            raise out[0]
        return out[0]

    def chat_batch(
        self,
        reqs: list[ChatRequest],
        deliver: Callable[[int, Any], None],
        cancelled: list[Callable[[], bool]] | None = None,
    ) -> None:
        """Samples every request's rows in one generate call and hands each its chat.completion (or the HttpError
        that is its answer) through `deliver(i, result)` as soon as its own rows have ended. A batch that runs out
        of memory is tried again one request at a time, so that requests which fit alone are still answered."""
        answered: set[int] = set()

        def answer(i: int, result: Any) -> None:
            answered.add(i)
            deliver(i, result)

        groups: list[tuple[int, Group]] = []
        for i, req in enumerate(reqs):
            try:
                groups.append((i, request_group(self.policy, req, cancelled[i] if cancelled else lambda: False)))
            except ValueError as err:
                answer(i, HttpError(400, str(err)))
        step = self.step

        def run(part: list[tuple[int, Group]]) -> None:
            done = lambda j, samples: answer(  # noqa: E731
                part[j][0], completion(self.policy, reqs[part[j][0]], samples, model_id=self.model_id, step=step)
            )
            generate_groups(self.policy, [g for _, g in part], on_done=done)

        try:
            self._guard_oom("generation", lambda: run(groups) if groups else None)
        except HttpError as err:
            if len(groups) == 1:
                answer(groups[0][0], err)
                return
            for one in [g for g in groups if g[0] not in answered]:
                try:
                    self._guard_oom("generation", lambda one=one: run([one]))
                except HttpError as alone:
                    answer(one[0], alone)

    def score(self, req: ScoreRequest) -> dict[str, Any]:
        self.check_identity(req.tokenizer)
        vocab = self.vocab_size()
        encode = lambda text: list(self.tokenizer.encode(text, add_special_tokens=False))  # noqa: E731
        seqs, spans = [], []
        for i, item in enumerate(req.items):
            # The protocol's validator makes each item carry exactly one of prompt_ids and messages.
            prompt = (
                list(item.prompt_ids)
                if item.prompt_ids is not None
                else chat_prompt_ids(self.policy, [m.model_dump() for m in item.messages or []])
            )
            if item.prefix:
                prompt += encode(item.prefix)
            if not prompt:
                raise BatchError(f"items.{i}.prompt_ids", "is empty: the first token needs a context")
            reply = list(item.token_ids) if item.token_ids is not None else encode(item.reply or "")
            if not reply:
                raise BatchError(f"items.{i}.reply", "has no tokens to score")
            check_ids(prompt, vocab, f"items.{i}.prompt_ids")
            check_ids(reply, vocab, f"items.{i}.token_ids")
            overflow = req.max_length is not None and len(prompt) + len(reply) > req.max_length
            spans.append((prompt, reply, overflow))
            if not overflow:
                ids = prompt + reply
                seqs.append(Sequence(input_ids=ids, loss_mask=[0] * len(ids), advantages=0.0))
        rows = iter(
            self._guard_oom("scoring", lambda: score(self.policy, seqs, temperature=req.temperature)) if seqs else []
        )
        results = []
        for prompt, reply, overflow in spans:
            if overflow:
                results.append({"prompt_ids": prompt, "token_ids": reply, "logprobs": [], "sum": 0.0, "overflow": True})
                continue
            lp = next(rows)[len(prompt) :]
            result = {"prompt_ids": prompt, "token_ids": reply, "logprobs": lp, "sum": float(sum(lp))}
            if req.offsets:
                result["offsets"] = self.reply_offsets(reply)
            results.append(result)
        return {"step": self.step, "results": results}

    def reply_offsets(self, reply: list[int]) -> list[int]:
        """Where each token starts in the reply's text (special tokens decode to nothing), in characters."""
        tok = self.tokenizer
        return [len(tok.decode(reply[:i], skip_special_tokens=True)) for i in range(len(reply))]

    def update(self, batch: Batch) -> dict[str, Any]:
        live = [t for t in batch.trajectories if not t.masked]
        if live and batch.tokenizer is None:
            raise BatchError(
                "tokenizer",
                "is missing: a batch with token ids must name the tokenizer and chat template they came from",
            )
        self.check_identity(batch.tokenizer)
        seqs = batch_sequences(batch, self.vocab_size())
        if not seqs:
            return {
                "step": self.step,
                "batch_step": batch.step,
                "skipped": True,
                "sequences": 0,
                "reason": "every trajectory is masked",
            }
        h = batch.hyper
        try:
            loss = LossConfig(
                clip_low=h.clip_low, clip_high=h.clip_high, kl_coef=h.kl, loss_agg_mode=batch.loss_agg_mode
            )
        except ValueError as err:
            raise BatchError("hyper", str(err)) from None
        if h.kl > 0 and self.policy.lora is None and self.policy.reference is None:
            raise BatchError(
                "hyper.kl",
                "a KL term needs a reference model: start the worker with --reference (full fine-tuning keeps a frozen copy)",
            )
        cfg = UpdateConfig(
            loss=loss,
            lr=h.lr,
            micro_batch_size=batch.micro_batch_size,
            max_grad_norm=batch.max_grad_norm,
            temperature=h.temperature if h.temperature > 0 else 1.0,
        )
        try:
            stats = self._guard_oom("the update", lambda: update_step(self.policy, self.optimizer(), seqs, cfg))
        except FloatingPointError as err:
            raise HttpError(422, str(err)) from None
        self.step += 1
        # JSON has no inf or NaN (tokens/s of an instant step, a metric over no tokens): those become null.
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in stats.items()}
        return {"step": self.step, "batch_step": batch.step, "skipped": False, **clean}

    def _examples(self, req: EvalLossRequest):
        self.check_identity(req.tokenizer)
        try:
            return tokenize_examples(
                self.policy.tokenizer, [[m.model_dump() for m in e.messages] for e in req.examples], req.max_length
            )
        except ConversationError as err:
            raise BatchError(f"examples.{err.index}", err.message) from None

    def sft(self, req: SftRequest) -> dict[str, Any]:
        examples = self._examples(req)
        try:
            stats = self._guard_oom(
                "the SFT step",
                lambda: sft_step(
                    self.policy,
                    self.optimizer(),
                    examples,
                    lr=req.lr,
                    micro_batch_size=req.micro_batch_size,
                    max_grad_norm=req.max_grad_norm,
                ),
            )
        except FloatingPointError as err:
            raise HttpError(422, str(err)) from None
        if not stats["skipped"]:
            self.step += 1
        return {"step": self.step, **stats}

    def eval_loss(self, req: EvalLossRequest) -> dict[str, Any]:
        examples = self._examples(req)
        return {
            "step": self.step,
            **self._guard_oom(
                "the loss evaluation", lambda: eval_loss(self.policy, examples, micro_batch_size=req.micro_batch_size)
            ),
        }

    def save(self, req: SaveRequest) -> dict[str, Any]:
        state = {"step": self.step, "caller_step": req.step, "model": self.model_id, **self.identity()}
        path = checkpoint.write_checkpoint(
            self.ckpt_dir, req.tag, self.policy, self._optimizer, state, optimizer_from=self._pending
        )
        return {"path": str(path.resolve()), "step": self.step}

    def load(self, req: LoadRequest) -> dict[str, Any]:
        path = Path(req.path)
        try:
            state = checkpoint.read_state(path)
        except (FileNotFoundError, ValueError) as err:
            raise HttpError(404 if isinstance(err, FileNotFoundError) else 400, str(err)) from None
        self.restore(path, state)
        return {"path": str(path.resolve()), "step": self.step, **self.identity()}

    def restore(self, path: Path, state: dict[str, Any] | None = None) -> None:
        state = state or checkpoint.read_state(path)
        old = self.policy
        policy = load_policy(path, device=old.device, dtype=old.dtype)
        # A full fine-tune's reference is the starting policy, not the checkpoint.
        policy.reference = old.reference
        if self._optimizer is not None:
            self._lr = self._optimizer.param_groups[0]["lr"]
        # The optimiser state is read at the first step (a checkpoint served for sampling never needs it).
        self.policy, self._optimizer, self._pending, self.step = policy, None, path, int(state["step"])
        self._identity = None
        del old
        gc.collect()
