"""Request bodies of the worker's HTTP endpoints, as pydantic models.

They mirror schemas/trainer/batch.schema.json and endpoints.schema.json (the
TypeScript client checks the same shapes before sending). The batch is strict
(unknown fields are refused, as the schema's additionalProperties: false
says); the OpenAI-compatible request ignores fields it does not use, since
OpenAI clients send options this worker has no use for.
"""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .loss import AggMode


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ── the GRPO batch (POST /update) ────────────────────────────────────────────


class Hyper(Strict):
    lr: float
    clip_low: float
    clip_high: float
    kl: float
    temperature: float


class Message(Strict):
    role: Literal["system", "user", "assistant"]
    content: str
    loss_mask: Literal[0, 1]
    logprobs: Optional[list[float]] = None


class Turn(Strict):
    """One assistant turn exactly as sampled: the context the policy saw and what it wrote."""

    prompt_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    # Per sampled token; None: every token carries loss.
    loss_mask: Optional[list[Literal[0, 1]]] = None


class Trajectory(Strict):
    id: str
    group_id: str
    task_id: str
    sample: int = Field(ge=0)
    reward: float
    advantage: float
    turn_advantages: list[float]
    masked: bool
    mask_reason: Optional[Literal["timed_out", "unknown", "crashed"]]
    variables: Optional[dict[str, float]]
    messages: list[Message]
    # The exact tokens; required on every trajectory that is not masked.
    turns: Optional[list[Turn]] = None


class Group(Strict):
    group_id: str
    mean: float
    std: float
    zero_signal: bool


class TokenizerIdentity(Strict):
    tokenizer_sha256: str
    chat_template_sha256: str


class Batch(Strict):
    format: Literal["mlepipe-grpo-batch/1"]
    step: int = Field(ge=1)
    advantage: Literal["grpo", "drgrpo"]
    group_size: int = Field(ge=1)
    hyper: Hyper
    trajectories: list[Trajectory]
    groups: list[Group]
    loss_agg_mode: AggMode = "token-mean"
    # trajectory: every sampled token gets its trajectory's advantage; turn: turn k's tokens get turn_advantages[k].
    advantage_level: Literal["trajectory", "turn"] = "trajectory"
    tokenizer: Optional[TokenizerIdentity] = None
    micro_batch_size: int = Field(default=1, ge=1)
    max_grad_norm: Optional[float] = Field(default=1.0, gt=0)


# ── scoring, checkpoints ─────────────────────────────────────────────────────


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: str
    content: str


class ScoreItem(Strict):
    """A context (token ids, or messages rendered with the chat template ready for the reply) and the reply's tokens.

    A reply may instead come as text (`reply`), which the worker tokenises; `prefix` is assistant text already
    written before it (tokenised onto the context, not scored). Turn-level credit scores a tool call this way
    under contexts that hold extra messages, which only the worker can render.
    """

    prompt_ids: Optional[list[int]] = None
    messages: Optional[list[ChatMessage]] = None
    token_ids: Optional[list[int]] = None
    reply: Optional[str] = None
    prefix: Optional[str] = None

    @model_validator(mode="after")
    def one_context(self) -> "ScoreItem":
        if (self.prompt_ids is None) == (self.messages is None):
            raise ValueError("give exactly one of prompt_ids and messages")
        if (self.token_ids is None) == (self.reply is None):
            raise ValueError("give exactly one of token_ids and reply")
        return self


class ScoreRequest(Strict):
    items: list[ScoreItem] = Field(min_length=1)
    temperature: float = Field(default=1.0, gt=0)
    tokenizer: Optional[TokenizerIdentity] = None
    # Items longer than this (context and reply, in tokens) are not scored: their result says `overflow`.
    max_length: Optional[int] = Field(default=None, ge=2)
    # Each result also gives where each reply token starts in the reply's decoded text, so a caller can score
    # a span of a reply that was sampled as exact ids (a tool call after its reasoning).
    offsets: bool = False


class SaveRequest(Strict):
    tag: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
    # The caller's step number, recorded beside the worker's own.
    step: Optional[int] = None


class LoadRequest(Strict):
    path: str


# ── supervised fine-tuning (POST /sft, POST /eval_loss) ──────────────────────


class SftMessage(Strict):
    role: Literal["system", "user", "assistant"]
    content: str


class SftExample(Strict):
    """One conversation; the worker renders it with its chat template and trains on the assistant's tokens."""

    messages: list[SftMessage] = Field(min_length=1)


class EvalLossRequest(Strict):
    examples: list[SftExample] = Field(min_length=1)
    max_length: int = Field(default=10240, ge=2)
    micro_batch_size: int = Field(default=1, ge=1)
    tokenizer: Optional[TokenizerIdentity] = None


class SftRequest(EvalLossRequest):
    """One optimiser step over `examples` (the effective batch; micro-batches accumulate gradients)."""

    lr: float = Field(gt=0)
    max_grad_norm: Optional[float] = Field(default=1.0, gt=0)


# ── OpenAI-compatible chat completions ───────────────────────────────────────


class ChatRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    model: Optional[str] = None
    messages: list[ChatMessage] = Field(min_length=1)
    n: int = Field(default=1, ge=1, le=64)
    temperature: float = Field(default=1.0, ge=0)
    top_p: float = Field(default=1.0, gt=0, le=1)
    max_tokens: Optional[int] = Field(default=None, ge=1)
    max_completion_tokens: Optional[int] = Field(default=None, ge=1)
    seed: Optional[int] = None
    stop: Optional[Union[str, list[str]]] = None
    logprobs: bool = False
    stream: bool = False

    def stop_strings(self) -> list[str]:
        return [self.stop] if isinstance(self.stop, str) else list(self.stop or [])
