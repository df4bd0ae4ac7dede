"""The policy: a causal LM of a real architecture (Qwen3) with optional LoRA.

A model comes either from a path (a Hugging Face checkpoint on disk) or from
a config with random weights (tests and the GPU benchmark; nothing is
downloaded). bf16 on CUDA, fp32 on CPU. With LoRA only the adapters train and
the frozen base with the adapters switched off is the KL reference; with full
fine-tuning a frozen copy is kept when a reference is asked for.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerFast, Qwen3Config

# Qwen3-8B's architecture (its config.json), for benchmarks with random weights.
QWEN3_8B: dict[str, Any] = dict(
    hidden_size=4096,
    num_hidden_layers=36,
    num_attention_heads=32,
    num_key_value_heads=8,
    intermediate_size=12288,
    vocab_size=151936,
    head_dim=128,
    rope_theta=1_000_000.0,
    max_position_embeddings=40960,
    rms_norm_eps=1e-6,
    tie_word_embeddings=False,
)

# The same architecture at a size that trains on a CPU in milliseconds (give it
# the vocabulary size of the tokenizer it is used with).
QWEN3_TINY: dict[str, Any] = {
    **QWEN3_8B,
    **dict(
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        intermediate_size=128,
        head_dim=16,
        max_position_embeddings=1024,
    ),
}

# The tiny model's shapes with heads vLLM's CPU attention serves: its kernels take a head size of 32 or more (a
# head_dim of 16 starts a server that dies on its first request). Two heads of 32 instead of four of 16, one
# key-value head instead of two: every weight matrix keeps its shape, so the model is no larger.
QWEN3_TINY_VLLM: dict[str, Any] = {**QWEN3_TINY, **dict(num_attention_heads=2, num_key_value_heads=1, head_dim=32)}

# The tiny presets by name (`python -m mlepipe_worker tiny --preset`).
TINY_PRESETS: dict[str, dict[str, Any]] = {"worker": QWEN3_TINY, "vllm": QWEN3_TINY_VLLM}

QWEN3_LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")

MANIFEST = "mlepipe-worker.json"


@dataclass
class LoraSpec:
    rank: int = 64
    alpha: int = 128
    targets: tuple[str, ...] = QWEN3_LORA_TARGETS
    # No dropout by default: the policy that samples and the one that trains
    # must give the same log-probabilities for the PPO ratio to start at 1.
    dropout: float = 0.0


def qwen3_config(**fields: Any) -> Qwen3Config:
    """A Qwen3 config; attention runs through PyTorch's SDPA kernels."""
    config = Qwen3Config(**fields)
    config._attn_implementation = "sdpa"
    return config


def default_device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def default_dtype(device: torch.device) -> torch.dtype:
    return torch.bfloat16 if device.type == "cuda" else torch.float32


@dataclass
class Policy:
    # A transformers model, or a peft model around one: their methods (save_pretrained, get_input_embeddings) are
    # set at run time, which torch's stubs type as Tensor | Module.
    model: Any
    tokenizer: PreTrainedTokenizerFast | None
    device: torch.device
    dtype: torch.dtype
    lora: LoraSpec | None
    # Where the base weights come from: {"path": ...} or {"config": ..., "seed": ...}.
    base: dict[str, Any]
    reference: torch.nn.Module | None = field(default=None, repr=False)

    def trainable_parameters(self) -> list[torch.nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    @contextlib.contextmanager
    def reference_model(self):
        """The frozen reference for the KL term: the base without adapters (LoRA) or the kept copy."""
        if self.lora is not None:
            with self.model.disable_adapter():
                yield self.model
        elif self.reference is not None:
            yield self.reference
        else:
            raise ValueError("this policy keeps no reference model: build it with reference=True to use a KL term")


def _base_model(base: dict[str, Any], device: torch.device, dtype: torch.dtype) -> torch.nn.Module:
    if "path" in base:
        model = AutoModelForCausalLM.from_pretrained(base["path"], dtype=dtype, device_map={"": device})
    else:
        torch.manual_seed(int(base.get("seed", 0)))
        # Constructing under the target device puts the random weights straight
        # there: an 8B model never passes through host memory.
        with torch.device(device):
            model = AutoModelForCausalLM.from_config(qwen3_config(**base["config"]), dtype=dtype)
    model.config._attn_implementation = "sdpa"
    return model


def build_policy(
    model: str | dict[str, Any],
    *,
    tokenizer: PreTrainedTokenizerFast | None = None,
    lora: LoraSpec | None = None,
    device: torch.device | str | None = None,
    dtype: torch.dtype | None = None,
    gradient_checkpointing: bool = False,
    reference: bool = False,
    seed: int = 0,
) -> Policy:
    """`model` is a checkpoint path or a dict of Qwen3 config fields (random weights drawn from `seed`)."""
    dev = torch.device(device) if device is not None else default_device()
    dt = dtype or default_dtype(dev)
    base = {"path": model} if isinstance(model, str) else {"config": dict(model), "seed": seed}
    net = _base_model(base, dev, dt)
    return _wrap(net, base, tokenizer, lora, dev, dt, gradient_checkpointing, reference)


def _wrap(net, base, tokenizer, lora, dev, dt, gradient_checkpointing, reference, adapter_dir=None) -> Policy:
    ref = None
    if gradient_checkpointing:
        net.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        net.config.use_cache = False
    if lora is not None:
        from peft import LoraConfig, PeftModel, get_peft_model

        if adapter_dir is not None:
            net = PeftModel.from_pretrained(net, adapter_dir, is_trainable=True)
        else:
            cfg = LoraConfig(
                r=lora.rank,
                lora_alpha=lora.alpha,
                target_modules=list(lora.targets),
                lora_dropout=lora.dropout,
                bias="none",
                task_type="CAUSAL_LM",
            )
            net = get_peft_model(net, cfg)
    else:
        if reference:
            ref = copy.deepcopy(net).eval().requires_grad_(False)
        net.requires_grad_(True)
    return Policy(model=net, tokenizer=tokenizer, device=dev, dtype=dt, lora=lora, base=base, reference=ref)


def save_policy(policy: Policy, path: str | Path) -> Path:
    """LoRA: the adapter (the base is named in the manifest); full: all weights. Both as safetensors."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    base = policy.base
    if policy.lora is not None:
        policy.model.save_pretrained(out / "adapter")
    else:
        policy.model.save_pretrained(out / "model")
        base = {"path": str(out / "model")}
    if policy.tokenizer is not None:
        policy.tokenizer.save_pretrained(out / "tokenizer")
    manifest = {
        "format": "mlepipe-worker-checkpoint/1",
        "base": base,
        "lora": asdict(policy.lora) if policy.lora else None,
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2))
    return out


def load_policy(path: str | Path, *, device=None, dtype=None, gradient_checkpointing=False, reference=False) -> Policy:
    src = Path(path)
    manifest = json.loads((src / MANIFEST).read_text())
    dev = torch.device(device) if device is not None else default_device()
    dt = dtype or default_dtype(dev)
    lora = LoraSpec(**{**manifest["lora"], "targets": tuple(manifest["lora"]["targets"])}) if manifest["lora"] else None
    tok = AutoTokenizer.from_pretrained(src / "tokenizer") if (src / "tokenizer").is_dir() else None
    base = manifest["base"]
    if lora is None:
        base = {"path": str(src / "model")}
    net = _base_model(base, dev, dt)
    adapter = str(src / "adapter") if lora is not None else None
    return _wrap(net, base, tok, lora, dev, dt, gradient_checkpointing, reference, adapter_dir=adapter)


# ── tokenizer ────────────────────────────────────────────────────────────────

ENDOFTEXT, IM_START, IM_END = "<|endoftext|>", "<|im_start|>", "<|im_end|>"

# Qwen2.5's own chat template (ChatML with a default system prompt), as its tokenizer ships it: a tiny
# model renders conversations exactly as a real Qwen tokenizer does (templates/README.md).
CHAT_TEMPLATE = (Path(__file__).parent / "templates" / "qwen2_5.jinja").read_text(encoding="utf-8")


def train_tokenizer(corpus: Iterable[str], vocab_size: int = 512) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer trained on `corpus`, with Qwen's special tokens and Qwen2.5's chat template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[ENDOFTEXT, IM_START, IM_END],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=IM_END, pad_token=ENDOFTEXT, chat_template=CHAT_TEMPLATE
    )


def tokenizer_identity(tokenizer: PreTrainedTokenizerFast) -> str:
    """sha256 of the vocabulary, merges, normalisation and chat template: equal only for identical tokenisation."""
    h = hashlib.sha256()
    h.update(tokenizer.backend_tokenizer.to_str().encode())
    h.update(b"\0")
    h.update((tokenizer.chat_template or "").encode())
    return h.hexdigest()
