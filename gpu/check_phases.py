"""The phases of gpu/check.py: each takes the shapes and its time guard and returns its record's fields.

Every case runs through `case()`, which records its peak memory and turns an
out-of-memory error into `"oom": true`, so that one case too large for the GPU
is a measurement, not the end of the run.
"""

from __future__ import annotations

import gc
import json
import platform
import tempfile
import threading
import time
import traceback
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from mlepipe_worker.model import QWEN3_8B, QWEN3_TINY, LoraSpec, build_policy

# Qwen3-30B-A3B's architecture (its config.json), cut to a few layers by the shapes below.
QWEN3_30B_A3B: dict[str, Any] = dict(
    hidden_size=2048, intermediate_size=6144, moe_intermediate_size=768, num_experts=128, num_experts_per_tok=8,
    num_attention_heads=32, num_key_value_heads=4, head_dim=128, vocab_size=151936, max_position_embeddings=40960,
    rope_theta=1_000_000.0, rms_norm_eps=1e-6, norm_topk_prob=True, tie_word_embeddings=False,
)  # fmt: skip


@dataclass
class Shapes:
    device: torch.device
    model: dict[str, Any]
    # The efficacy model: the same widths, fewer layers and a smaller vocabulary (its weights' scale is what matters).
    efficacy_model: dict[str, Any]
    # Enough steps at lr 1e-6 for the intended change (about steps × lr) to pass a bf16 weight's spacing: under
    # it, even exact masters round back to the old bf16 value.
    efficacy_steps: int
    lora_rank: int
    update_tokens: list[int]
    # (batch, context tokens, new tokens)
    sampling: list[tuple[int, int, int]]
    moe_model: dict[str, Any]
    moe_tokens: int
    http_new_tokens: int
    dtype: torch.dtype = torch.bfloat16
    notes: dict[str, Any] = field(default_factory=dict)

    @staticmethod
    def h200() -> "Shapes":
        return Shapes(
            device=torch.device("cuda"),
            model=dict(QWEN3_8B),
            efficacy_model={**QWEN3_8B, "num_hidden_layers": 1, "vocab_size": 32768},
            efficacy_steps=100,
            lora_rank=64,
            update_tokens=[8192, 16384, 32768],
            sampling=[(1, 4096, 128), (1, 16384, 128), (64, 1024, 128)],
            moe_model={**QWEN3_30B_A3B, "num_hidden_layers": 4},
            moe_tokens=4096,
            http_new_tokens=256,
        )

    @staticmethod
    def tiny() -> "Shapes":
        tiny = {**QWEN3_TINY, "vocab_size": 512}
        moe = dict(hidden_size=64, intermediate_size=128, moe_intermediate_size=32, num_experts=8, num_experts_per_tok=2, num_attention_heads=4, num_key_value_heads=2, head_dim=16, vocab_size=512, num_hidden_layers=2)  # fmt: skip
        return Shapes(
            torch.device("cpu"), tiny, tiny, 100, 8, [64, 128, 256], [(1, 128, 8), (1, 256, 8), (8, 64, 8)], moe, 128, 8
        )


class Guard:
    """A phase's time budget: cases not started by its end are skipped, and say so."""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.until = time.perf_counter() + seconds

    def expired(self) -> bool:
        return time.perf_counter() > self.until


def free() -> None:
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def case(shapes: Shapes, guard: Guard, label: dict[str, Any], fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    if guard.expired():
        return {**label, "skipped": "the phase's time guard ran out"}
    cuda = shapes.device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats(shapes.device)
    try:
        out = fn()
    except torch.OutOfMemoryError:
        out = {"oom": True}
    except Exception as err:  # recorded in the case's line; the next case runs
        traceback.print_exc()
        out = {"error": f"{type(err).__name__}: {err}"}
    free()
    peak = round(torch.cuda.max_memory_allocated(shapes.device) / 2**30, 2) if cuda else None
    return {**label, **out, "peak_memory_gib": peak}


def _ids(n: int, vocab: int, seed: int) -> list[int]:
    return torch.randint(0, vocab, (n,), generator=torch.Generator().manual_seed(seed)).tolist()


def versions(shapes: Shapes, guard: Guard) -> dict[str, Any]:
    import peft
    import transformers
    from torch.nn.attention import SDPBackend, sdpa_kernel

    dev = shapes.device
    out: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "python": platform.python_version(),
    }
    if dev.type == "cuda":
        p = torch.cuda.get_device_properties(dev)
        out.update(
            gpu=p.name,
            capability=f"{p.major}.{p.minor}",
            memory_gib=round(p.total_memory / 2**30, 1),
            cudnn=torch.backends.cudnn.version(),
        )
    q = torch.randn(1, 8, 256, 128, device=dev, dtype=shapes.dtype)
    backends = {}
    for name in ("FLASH_ATTENTION", "EFFICIENT_ATTENTION", "CUDNN_ATTENTION", "MATH"):
        try:
            with sdpa_kernel([getattr(SDPBackend, name)]):
                torch.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
            backends[name.lower()] = "ok"
        except Exception as err:  # which kernels run is the finding
            backends[name.lower()] = f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"
    out["sdpa"] = backends
    return out


def efficacy(shapes: Shapes, guard: Guard) -> dict[str, Any]:
    from mlepipe_worker.optim import realised_share
    from mlepipe_worker.update import make_optimizer

    lr, cases = 1e-6, []
    for how in ("worker", "in_place"):

        def run(how=how) -> dict[str, Any]:
            policy = build_policy(shapes.efficacy_model, device=shapes.device, dtype=shapes.dtype)
            make = (
                (lambda ps: make_optimizer(policy, lr))
                if how == "worker"
                else (lambda ps: torch.optim.AdamW(ps, lr=lr))
            )
            share = realised_share(policy.trainable_parameters(), make, steps=shapes.efficacy_steps, lr=lr)
            return {"realised_share": round(share, 4)}

        cases.append(
            case(shapes, guard, {"optimizer": how, "lr": lr, "steps": shapes.efficacy_steps, "dtype": "bfloat16"}, run)
        )
    return {"cases": cases}


def _estimate(shapes: Shapes, mode: str, checkpointing: bool, tokens: int) -> float:
    """The worker's memory plan for this case (memory.py), to read beside the measured peak."""
    from mlepipe_worker.memory import activation_bytes, count_parameters, static_bytes
    from mlepipe_worker.model import QWEN3_LORA_TARGETS, qwen3_config

    config, rank = qwen3_config(**shapes.model), None if mode == "full" else shapes.lora_rank
    total, trainable = count_parameters(config, QWEN3_LORA_TARGETS, rank)
    size = torch.tensor([], dtype=shapes.dtype).element_size()
    static = static_bytes(total, trainable, full=rank is None, weight_bytes=size)["total"]
    acts = activation_bytes(config, tokens, checkpointing=checkpointing, lora_rank=rank or 0, act_bytes=size)
    return round((static + sum(acts.values())) / 2**30, 6)


def update(shapes: Shapes, guard: Guard) -> dict[str, Any]:
    from mlepipe_worker.loss import LossConfig
    from mlepipe_worker.update import Sequence, UpdateConfig, make_optimizer, update_step

    cfg = UpdateConfig(
        loss=LossConfig(clip_low=0.2, clip_high=0.28, loss_agg_mode="token-mean"), lr=1e-6, micro_batch_size=1
    )
    vocab, cases = shapes.model["vocab_size"], []
    for mode in ("full", f"lora{shapes.lora_rank}"):
        for checkpointing in (True, False):
            label = {"mode": mode, "gradient_checkpointing": checkpointing}
            held: dict[str, Any] = {}

            def build(mode=mode, checkpointing=checkpointing, held=held) -> dict[str, Any]:
                lora = LoraSpec(rank=shapes.lora_rank, alpha=2 * shapes.lora_rank) if mode != "full" else None
                held["policy"] = build_policy(
                    shapes.model,
                    lora=lora,
                    device=shapes.device,
                    dtype=shapes.dtype,
                    gradient_checkpointing=checkpointing,
                )
                held["optimizer"] = make_optimizer(held["policy"], cfg.lr)
                return {"optimizer": type(held["optimizer"]).__name__}

            built = case(shapes, guard, {**label, "tokens": 0, "build": True}, build)
            if "optimizer" not in built:
                cases.append(built)
                continue
            ran_out = False
            for n in shapes.update_tokens:
                if ran_out:
                    cases.append({**label, "tokens": n, "skipped": "a shorter sequence ran out of memory"})
                    continue

                def step(n=n, held=held) -> dict[str, Any]:
                    seq = Sequence(_ids(n, vocab, n), [0] * (n // 4) + [1] * (n - n // 4), advantages=1.0)
                    update_step(
                        held["policy"], held["optimizer"], [seq], cfg
                    )  # warm-up: allocator, kernels, Adam state
                    _sync(shapes.device)
                    t = time.perf_counter()
                    stats = update_step(held["policy"], held["optimizer"], [seq], cfg)
                    _sync(shapes.device)
                    s = time.perf_counter() - t
                    return {
                        "step_seconds": round(s, 3),
                        "tokens_per_s": round(n / s, 1),
                        "loss": stats["loss"],
                        "grad_norm": stats["grad_norm"],
                    }

                cases.append(
                    case(
                        shapes,
                        guard,
                        {
                            **label,
                            "tokens": n,
                            "optimizer": built["optimizer"],
                            "estimated_peak_gib": _estimate(shapes, mode, checkpointing, n),
                        },
                        step,
                    )
                )
                ran_out = bool(cases[-1].get("oom"))
            held.clear()
            free()
    return {
        "model": "qwen3-8b" if shapes.device.type == "cuda" else "qwen3-tiny",
        "loss_agg_mode": "token-mean",
        "cases": cases,
    }


def sampling(shapes: Shapes, guard: Guard) -> dict[str, Any]:
    from mlepipe_worker.generate import generate

    policy = build_policy(shapes.model, device=shapes.device, dtype=shapes.dtype)
    vocab, cases = shapes.model["vocab_size"], []
    generate(policy, [_ids(8, vocab, 0)], max_new_tokens=2, temperature=1.0, ignore_stop=True, seed=0)  # warm-up
    for batch, context, new in shapes.sampling:

        def run(batch=batch, context=context, new=new) -> dict[str, Any]:
            prompts = [_ids(context - new, vocab, i) for i in range(batch)]
            _sync(shapes.device)
            t = time.perf_counter()
            out = generate(policy, prompts, max_new_tokens=new, temperature=1.0, ignore_stop=True, seed=0)
            _sync(shapes.device)
            s = time.perf_counter() - t
            made = sum(len(x.token_ids) for x in out)
            return {"seconds": round(s, 3), "generated_tokens": made, "tokens_per_s": round(made / s, 1)}

        cases.append(case(shapes, guard, {"batch": batch, "context": context, "new_tokens": new}, run))
    return {"cases": cases}


def moe(shapes: Shapes, guard: Guard) -> dict[str, Any]:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, Qwen3MoeConfig

    def run() -> dict[str, Any]:
        config = Qwen3MoeConfig(**shapes.moe_model)
        config._attn_implementation = "sdpa"
        with torch.device(shapes.device):
            model = AutoModelForCausalLM.from_config(config, dtype=shapes.dtype)
        # The experts are fused parameters, not Linear modules: LoRA wraps the attention projections.
        r = shapes.lora_rank
        model = get_peft_model(
            model,
            LoraConfig(
                r=r, lora_alpha=2 * r, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"], task_type="CAUSAL_LM"
            ),
        )
        ids = torch.tensor([_ids(shapes.moe_tokens, config.vocab_size, 7)], device=shapes.device)
        _sync(shapes.device)
        t = time.perf_counter()
        loss = model(input_ids=ids, labels=ids).loss
        loss.backward()
        _sync(shapes.device)
        s = time.perf_counter() - t
        trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
        grads = sum(1 for p in model.parameters() if p.requires_grad and p.grad is not None)
        return {
            "seconds": round(s, 3),
            "tokens_per_s": round(shapes.moe_tokens / s, 1),
            "loss": float(loss),
            "params": sum(p.numel() for p in model.parameters()),
            "trainable_params": trainable,
            "adapters_with_grad": grads,
        }

    label = {
        "model": f"qwen3-moe, {shapes.moe_model['num_hidden_layers']} layers, {shapes.moe_model['num_experts']} experts",
        "tokens": shapes.moe_tokens,
        "lora_rank": shapes.lora_rank,
    }
    return {"cases": [case(shapes, guard, label, run)]}


def http(shapes: Shapes, guard: Guard) -> dict[str, Any]:
    try:
        import uvicorn

        from mlepipe_worker.server import create_app
    except ImportError as err:
        return {"unavailable": f"{err}: carry fastapi and uvicorn wheels to measure the HTTP path"}
    import socket

    from mlepipe_worker.model import train_tokenizer
    from mlepipe_worker.state import Worker

    words = ["the agent", "trains", "a forest", "on the csv", "and submits", "accuracy", "0.81", "Action:", "python"]
    tok = train_tokenizer([" ".join(words[i:] + words[:i]) for i in range(len(words))] * 4, vocab_size=512)
    policy = build_policy(
        {**shapes.model, "vocab_size": len(tok)},
        tokenizer=tok,
        lora=LoraSpec(rank=shapes.lora_rank, alpha=2 * shapes.lora_rank),
        device=shapes.device,
        dtype=shapes.dtype,
    )
    worker = Worker(policy, model_id="check", ckpt_dir=Path(tempfile.mkdtemp(prefix="mlepipe-check-")))
    sock = socket.create_server(("127.0.0.1", 0))
    url = "http://127.0.0.1:%d" % sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(worker), log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()

    def chat(i: int) -> dict[str, Any]:
        body = {
            "messages": [{"role": "user", "content": " ".join(words) * 8}],
            "max_tokens": shapes.http_new_tokens,
            "temperature": 1.0,
            "seed": i,
            "logprobs": True,
        }
        req = urllib.request.Request(
            url + "/v1/chat/completions", data=json.dumps(body).encode(), headers={"content-type": "application/json"}
        )
        t = time.perf_counter()
        with urllib.request.urlopen(req, timeout=300) as r:
            out = json.loads(r.read())
        return {"seconds": time.perf_counter() - t, "tokens": out["usage"]["completion_tokens"]}

    def run() -> dict[str, Any]:
        while not server.started:
            time.sleep(0.05)
        t = time.perf_counter()
        with ThreadPoolExecutor(4) as pool:
            done = list(pool.map(chat, range(4)))
        s = time.perf_counter() - t
        made = sum(d["tokens"] for d in done)
        return {
            "wall_seconds": round(s, 3),
            "request_seconds": [round(d["seconds"], 3) for d in done],
            "completion_tokens": made,
            "tokens_per_s": round(made / s, 1),
        }

    try:
        return {"cases": [case(shapes, guard, {"concurrent_requests": 4, "max_tokens": shapes.http_new_tokens}, run)]}
    finally:
        server.should_exit = True
        thread.join(timeout=30)
