"""`python -m mlepipe_worker tiny OUT`: a tiny Qwen3 with random weights as a model folder.

The folder is what `serve --model` and a `models:` entry's `path:` read, so a
CPU demo or test can run the whole chain (collection, SFT, GRPO) on a model it
made itself. The tokenizer is trained on the corpus given (the conversations
the model will be trained on compress well under it, which keeps sequences
short on a CPU); the context length is chosen here, since the scaffolds'
prompts run to thousands of tokens.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path


def corpus_texts(paths: Iterable[str | Path]) -> list[str]:
    """Texts to train the tokenizer on: every message of a JSONL file of conversations
    (records with `messages`, such as trajectories or SFT data), or a whole text file."""
    texts: list[str] = []
    for p in map(Path, paths):
        if not p.is_file():
            raise ValueError(f"corpus {p}: no such file")
        raw = p.read_text(encoding="utf-8", errors="replace")
        if p.suffix == ".jsonl":
            for n, line in enumerate(raw.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as err:
                    raise ValueError(f"corpus {p}:{n}: not JSON ({err.msg})") from None
                messages = record.get("messages") if isinstance(record, dict) else None
                if not isinstance(messages, list):
                    raise ValueError(f"corpus {p}:{n}: a JSONL corpus holds records with messages")
                texts += [m["content"] for m in messages if isinstance(m, dict) and isinstance(m.get("content"), str)]
        else:
            texts.append(raw)
    if not texts:
        raise ValueError("the corpus holds no text")
    return texts


def write_tiny(
    out: str | Path, corpus: list[str], *, vocab_size: int, context: int, seed: int, preset: str = "worker"
) -> tuple[Path, int]:
    """Writes config, weights and tokenizer (with the ChatML template) to `out`; returns it and the vocabulary
    size (below `vocab_size` when the corpus has fewer distinct merges). `preset` names the shapes: worker (the
    trainer worker's --tiny) or vllm (heads vLLM's CPU build serves, model.QWEN3_TINY_VLLM)."""
    from .model import TINY_PRESETS, build_policy, train_tokenizer

    if preset not in TINY_PRESETS:
        raise ValueError(f"--preset {preset}: one of {', '.join(TINY_PRESETS)}")

    if context < 64:
        raise ValueError(f"--context {context}: a model needs at least 64 positions")
    tok = train_tokenizer(corpus, vocab_size=vocab_size)
    policy = build_policy(
        {**TINY_PRESETS[preset], "vocab_size": len(tok), "max_position_embeddings": context},
        tokenizer=tok,
        device="cpu",
        seed=seed,
    )
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    policy.model.save_pretrained(target)
    tok.save_pretrained(target)
    return target, len(tok)
