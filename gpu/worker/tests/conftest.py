"""Fixtures: a tokenizer trained here on a small corpus and tiny Qwen3 policies (random weights, CPU, fp32)."""

import itertools
import os
import sys
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Two threads at most, or what OMP_NUM_THREADS says (test/run.mjs sets one: a second thread on a shared machine
# only spins waiting for a core).
if not os.environ.get("OMP_NUM_THREADS"):
    torch.set_num_threads(min(2, os.cpu_count() or 1))

from mlepipe_worker.model import QWEN3_TINY, LoraSpec, build_policy, train_tokenizer

SUBJECTS = ["the model", "a random forest", "the agent", "our baseline", "the grader"]
VERBS = ["trains on", "scores", "reads", "predicts", "submits"]
OBJECTS = ["the public csv", "twelve features", "a noisy label", "the validation split", "submission.csv"]


def corpus() -> list[str]:
    lines = [f"{s} {v} {o}." for s, v, o in itertools.product(SUBJECTS, VERBS, OBJECTS)]
    return lines + [
        "import pandas as pd\nprint(df.head())",
        "accuracy: 0.81 rmse: 1.25",
        "Traceback (most recent call last):",
    ]


@pytest.fixture(scope="session")
def tokenizer():
    return train_tokenizer(corpus(), vocab_size=384)


@pytest.fixture
def make_policy(tokenizer):
    def make(lora: bool = True, **kw):
        spec = LoraSpec(rank=8, alpha=16) if lora else None
        return build_policy(
            {**QWEN3_TINY, "vocab_size": len(tokenizer)},
            tokenizer=tokenizer,
            lora=spec,
            device="cpu",
            seed=kw.pop("seed", 0),
            **kw,
        )

    return make


def encode(tokenizer, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def jitter_adapters(policy, scale: float = 0.05, seed: int = 1) -> None:
    """LoRA's B starts at zero (the adapter is a no-op); random B makes gradients reach A and the reference differ."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in policy.model.named_parameters():
            if "lora_B" in name:
                p.copy_(torch.randn(p.shape, generator=g) * scale)


def conversation(
    tokenizer,
    reply1: str = "the model reads the public csv.",
    obs: str = "accuracy: 0.81",
    reply2: str = "submission.csv",
):
    """A two-turn agent trajectory as exact tokens: (ids, loss mask). The mask is 1 on the policy's two replies
    (with their closing <|im_end|>) and 0 on the prompt and the observation between them."""
    pieces = [
        (
            "<|im_start|>system\nyou are an ml agent<|im_end|>\n<|im_start|>user\nsolve the task<|im_end|>\n<|im_start|>assistant\n",
            0,
        ),
        (reply1 + "<|im_end|>", 1),
        ("\n<|im_start|>user\n" + obs + "<|im_end|>\n<|im_start|>assistant\n", 0),
        (reply2 + "<|im_end|>", 1),
    ]
    ids, mask = [], []
    for text, m in pieces:
        part = encode(tokenizer, text)
        ids += part
        mask += [m] * len(part)
    return ids, mask


@pytest.fixture
def served(make_policy, tmp_path):
    """A worker on a tiny policy served in this process (uvicorn on a thread), with an HTTP client to it."""
    import socket
    import threading

    import httpx
    import uvicorn

    from mlepipe_worker.server import create_app
    from mlepipe_worker.state import Worker

    worker = Worker(make_policy(), model_id="tiny", ckpt_dir=tmp_path)
    sock = socket.create_server(("127.0.0.1", 0))
    ready = threading.Event()
    server = uvicorn.Server(uvicorn.Config(create_app(worker, on_ready=ready.set), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    assert ready.wait(120), "the in-process server did not start"
    with httpx.Client(base_url=f"http://127.0.0.1:{sock.getsockname()[1]}", timeout=None) as http:
        yield worker, http
    server.should_exit = True
    thread.join()
