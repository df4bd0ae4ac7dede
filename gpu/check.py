"""The trainer worker's GPU benchmark (run it through gpu/check.sh).

Builds a Qwen3-8B-architecture model with random weights straight on the GPU
in bf16, LoRA r=64 α=128 on every projection, gradient checkpointing, and
measures through the worker's own code:
  - update: tokens/s of one optimiser step (update.update_step, token-mean,
    clip 0.2/0.28) on a batch of 8,192 tokens (4 sequences × 2,048), mean of
    the timed steps after one warm-up step, and the peak memory;
  - generation: tokens/s of generate.generate on 8 prompts × 256 new tokens
    (sampled, temperature 1, run to the full length), and the peak memory.
The last line printed is one JSON object, also written to $OUT/check.json
when OUT is set. --tiny runs the same code on a tiny config on the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import traceback

import torch


def log(msg: str) -> None:
    print(f"[check {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def gib(n: int) -> float:
    return round(n / 2**30, 2)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tiny", action="store_true", help="a tiny Qwen3 on the CPU: checks the script, measures nothing of interest")
    p.add_argument("--seqs", type=int, help="sequences in the update batch (default 4; tiny 2)")
    p.add_argument("--seq-len", type=int, help="tokens per sequence (default 2048; tiny 32)")
    p.add_argument("--micro-batch", type=int, default=2, help="sequences per forward/backward pass")
    p.add_argument("--steps", type=int, default=3, help="timed update steps after one warm-up step")
    p.add_argument("--gen-batch", type=int, default=8)
    p.add_argument("--gen-prompt", type=int, help="prompt tokens per generation prompt (default 128; tiny 8)")
    p.add_argument("--gen-tokens", type=int, help="new tokens per prompt (default 256; tiny 8)")
    p.add_argument("--dtype", choices=["bf16", "fp32"], help="default: bf16 on CUDA, fp32 on CPU")
    args = p.parse_args(argv)
    defaults = dict(seqs=(2, 4), seq_len=(32, 2048), gen_prompt=(8, 128), gen_tokens=(8, 256))
    for name, (tiny, full) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, tiny if args.tiny else full)
    return args


def versions() -> dict:
    import peft
    import transformers

    return {"torch": torch.__version__, "transformers": transformers.__version__, "peft": peft.__version__, "python": platform.python_version()}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reset_peak(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)


def peak(device: torch.device) -> float | None:
    return gib(torch.cuda.max_memory_allocated(device)) if device.type == "cuda" else None


def bench_update(policy, args, result: dict) -> None:
    from mlepipe_worker.loss import LossConfig
    from mlepipe_worker.update import Sequence, UpdateConfig, make_optimizer, score, update_step

    device = policy.device
    vocab = policy.model.config.vocab_size
    g = torch.Generator().manual_seed(0)
    prompt = args.seq_len // 4
    seqs = []
    for i in range(args.seqs):
        ids = torch.randint(0, vocab, (args.seq_len,), generator=g).tolist()
        # A quarter prompt (mask 0), then the sampled reply (mask 1); advantages ±1.
        seqs.append(Sequence(ids, [0] * prompt + [1] * (args.seq_len - prompt), advantages=1.0 if i % 2 == 0 else -1.0))
    t = time.perf_counter()
    for s, lp in zip(seqs, score(policy, seqs, micro_batch_size=args.micro_batch)):
        s.old_logprobs = lp
    log(f"old log-probs scored in {time.perf_counter() - t:.1f}s")

    cfg = UpdateConfig(loss=LossConfig(clip_low=0.2, clip_high=0.28, loss_agg_mode="token-mean"), lr=1e-6, micro_batch_size=args.micro_batch)
    optimizer = make_optimizer(policy, lr=cfg.lr)
    out = result["update"] = {
        "batch": f"{args.seqs} sequences x {args.seq_len} tokens",
        "tokens": args.seqs * args.seq_len,
        "loss_tokens": args.seqs * (args.seq_len - prompt),
        "micro_batch_size": args.micro_batch,
        "loss_agg_mode": "token-mean",
        "clip": [0.2, 0.28],
        "optimizer": "AdamW",
        "warmup_steps": 1,
        "timed_steps": args.steps,
    }
    stats = update_step(policy, optimizer, seqs, cfg)
    log(f"warm-up step: {stats['seconds']:.2f}s")
    reset_peak(device)
    times, last = [], stats
    for k in range(args.steps):
        sync(device)
        t = time.perf_counter()
        last = update_step(policy, optimizer, seqs, cfg)
        sync(device)
        times.append(time.perf_counter() - t)
        log(f"step {k + 1}: {times[-1]:.2f}s, loss {last['loss']:.4f}, grad norm {last['grad_norm']:.4f}")
    mean = sum(times) / len(times)
    out.update(
        tokens_per_s=round(out["tokens"] / mean, 1),
        step_seconds=[round(x, 3) for x in times],
        peak_memory_gib=peak(device),
        loss=last["loss"],
        grad_norm=last["grad_norm"],
        clip_frac=last["clip_frac"],
        entropy=last.get("entropy"),
    )


def bench_generate(policy, args, result: dict) -> None:
    from mlepipe_worker.generate import generate

    device = policy.device
    vocab = policy.model.config.vocab_size
    g = torch.Generator().manual_seed(1)
    prompts = [torch.randint(0, vocab, (args.gen_prompt,), generator=g).tolist() for _ in range(args.gen_batch)]
    out = result["generate"] = {"batch": args.gen_batch, "prompt_tokens": args.gen_prompt, "new_tokens": args.gen_tokens, "sampling": "temperature 1.0, top_p 1.0, run to max_new_tokens"}
    generate(policy, prompts, max_new_tokens=4, temperature=1.0, ignore_stop=True, seed=0)  # warm-up
    reset_peak(device)
    sync(device)
    t = time.perf_counter()
    samples = generate(policy, prompts, max_new_tokens=args.gen_tokens, temperature=1.0, ignore_stop=True, seed=0)
    sync(device)
    seconds = time.perf_counter() - t
    produced = sum(len(s.token_ids) for s in samples)
    out.update(generated_tokens=produced, seconds=round(seconds, 3), tokens_per_s=round(produced / seconds, 1), peak_memory_gib=peak(device))
    log(f"generation: {produced} tokens in {seconds:.2f}s")


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    t_start = time.perf_counter()
    if not args.tiny and not torch.cuda.is_available():
        print("gpu/check.sh: no CUDA device is visible to torch; use --tiny to check the script on a CPU", file=sys.stderr)
        return 3
    from mlepipe_worker.model import QWEN3_8B, QWEN3_TINY, LoraSpec, build_policy

    if args.tiny:
        device = torch.device("cpu")
        config = {**QWEN3_TINY, "vocab_size": 1024}
        name = "qwen3-tiny (random weights)"
    else:
        device = torch.device("cuda")
        config = dict(QWEN3_8B)
        name = "qwen3-8b architecture (random weights)"
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}.get(args.dtype or "", None)
    result: dict = {
        "check": "mlepipe-worker-gpu/1",
        "tiny": args.tiny,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else f"cpu ({os.cpu_count()} cores)",
        **versions(),
        "model": name,
        "lora": {"rank": 64, "alpha": 128, "targets": "q,k,v,o,gate,up,down"},
        "gradient_checkpointing": True,
    }
    failed = False
    try:
        t = time.perf_counter()
        policy = build_policy(config, lora=LoraSpec(rank=64, alpha=128), device=device, dtype=dtype, gradient_checkpointing=True, seed=0)
        sync(device)
        result["build_seconds"] = round(time.perf_counter() - t, 1)
        result["dtype"] = str(policy.dtype).replace("torch.", "")
        result["params"] = sum(p.numel() for p in policy.model.parameters())
        result["trainable_params"] = sum(p.numel() for p in policy.trainable_parameters())
        result["weights_memory_gib"] = gib(torch.cuda.memory_allocated(device)) if device.type == "cuda" else None
        log(f"built {name} in {result['build_seconds']}s: {result['params'] / 1e9:.2f}B parameters, {result['trainable_params'] / 1e6:.1f}M trainable")
    except Exception as err:  # one line of JSON whatever happens: the run is not repeatable at will
        traceback.print_exc()
        result["error"] = f"build: {type(err).__name__}: {err}"
        failed = True
    else:
        for phase, fn in (("update", bench_update), ("generate", bench_generate)):
            try:
                fn(policy, args, result)
            except Exception as err:
                traceback.print_exc()
                result.setdefault(phase, {})["error"] = f"{type(err).__name__}: {err}"
                failed = True
                if device.type == "cuda":
                    torch.cuda.empty_cache()
    result["total_seconds"] = round(time.perf_counter() - t_start, 1)
    line = json.dumps(result)
    if os.environ.get("OUT"):
        os.makedirs(os.environ["OUT"], exist_ok=True)
        with open(os.path.join(os.environ["OUT"], "check.json"), "w") as f:
            f.write(line + "\n")
    print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
