"""`python -m mlepipe_worker serve`: starts the worker's HTTP service.

  serve (--model DIR | --tiny) [--tokenizer DIR] [--lora-rank R] [--host H] [--port N]
        [--ckpt-dir DIR] [--resume DIR] ...
  tiny OUT [--corpus FILE ...] [--vocab N] [--context N] [--seed S]
        writes a tiny random-weight Qwen3 model folder (see tiny.py)

--port 0 takes a free port. Once it accepts requests the worker prints one
line, `mlepipe-worker listening on http://HOST:PORT`, on stdout; a caller that
started it waits for that line.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import socket
import sys
from pathlib import Path

TINY_CORPUS_WORDS = (
    ["the model", "the agent", "a baseline", "the grader", "our solution"],
    ["trains on", "reads", "predicts", "scores", "submits"],
    ["the csv", "twelve features", "the labels", "the validation split", "submission.csv"],
)


def tiny_corpus() -> list[str]:
    """A small fixed corpus for --tiny's tokenizer: tokenisation is then the same on every start."""
    lines = [" ".join(p) + "." for p in itertools.product(*TINY_CORPUS_WORDS)]
    return lines + ["import pandas as pd\nprint(df.head())", "accuracy: 0.81 rmse: 1.25", "Hello! How can I help?"]


def parse(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m mlepipe_worker")
    sub = ap.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="serve a policy over HTTP")
    src = s.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="a Hugging Face checkpoint directory, or a worker checkpoint written by /save")
    src.add_argument("--tiny", action="store_true", help="a tiny Qwen3 with random weights (tests, CPU)")
    s.add_argument(
        "--tokenizer", help="a tokenizer directory (default: the model's; --tiny trains one on a fixed corpus)"
    )
    s.add_argument(
        "--lora-rank",
        type=int,
        default=None,
        help="LoRA rank; 0: full fine-tuning (default 16; a worker checkpoint keeps its own, unless a rank above 0 is given over a full one)",
    )
    s.add_argument("--lora-alpha", type=int, default=None, help="LoRA alpha (default: twice the rank)")
    s.add_argument("--reference", action="store_true", help="full fine-tuning: keep a frozen copy as the KL reference")
    s.add_argument("--gradient-checkpointing", action="store_true")
    s.add_argument("--device", default=None, help="cuda or cpu (default: cuda when there is one)")
    s.add_argument("--seed", type=int, default=0, help="seed of --tiny's random weights")
    s.add_argument(
        "--lr", type=float, default=1e-6, help="the optimiser's initial learning rate (each batch sets its own)"
    )
    s.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8000, help="0: a free port")
    s.add_argument("--ckpt-dir", default="checkpoints", help="where /save writes (default ./checkpoints)")
    s.add_argument("--resume", default=None, help="start from the newest complete checkpoint in this directory, if any")
    s.add_argument(
        "--max-batch-rows",
        type=int,
        default=64,
        help="the most sampled rows one generate call batches across waiting chat requests (default 64)",
    )
    s.add_argument(
        "--check-memory",
        action="store_true",
        help="this worker will train: refuse, before loading weights, a plan whose training state and activations cannot fit the GPU",
    )
    # The variable lets a CPU machine plan for a GPU of a given size (and the tests refuse a plan through the CLI).
    memory = os.environ.get("MLEPIPE_WORKER_DEVICE_MEMORY_GIB")
    s.add_argument(
        "--device-memory-gib",
        type=float,
        default=float(memory) if memory else None,
        help="the memory --check-memory plans against (default: MLEPIPE_WORKER_DEVICE_MEMORY_GIB, else the CUDA device's; none on a CPU)",
    )
    s.add_argument(
        "--plan-tokens",
        type=int,
        default=None,
        help="the longest sequence this worker will train on, for --check-memory (default: the GRPO context, memory.PLAN_TOKENS)",
    )
    s.add_argument(
        "--plan-micro-batch", type=int, default=1, help="sequences in one forward pass, for --check-memory (default 1)"
    )
    t = sub.add_parser("tiny", help="write a tiny Qwen3 with random weights and a trained tokenizer as a model folder")
    t.add_argument("out", help="the folder to write")
    t.add_argument(
        "--corpus",
        nargs="+",
        default=[],
        help="text files, or JSONL files of records with messages, to train the tokenizer on (default: a fixed corpus)",
    )
    t.add_argument("--vocab", type=int, default=1024, help="the tokenizer's vocabulary size (default 1024)")
    t.add_argument("--context", type=int, default=8192, help="the model's context length in tokens (default 8192)")
    t.add_argument("--seed", type=int, default=0, help="seed of the random weights")
    t.add_argument(
        "--preset",
        choices=("worker", "vllm"),
        default="worker",
        help="the shapes: worker (as serve --tiny) or vllm (head size 32, which vLLM's CPU build serves)",
    )
    return ap.parse_args(argv)


def check_memory(args: argparse.Namespace, model: dict | Path, lora) -> None:
    """Refuses, before any weights are loaded, a plan whose training state and activations cannot fit the GPU (memory.py)."""
    import torch

    from .memory import PLAN_TOKENS, activation_bytes, count_parameters, refusal, static_bytes
    from .model import MANIFEST, QWEN3_LORA_TARGETS, LoraSpec, qwen3_config

    if not args.check_memory:
        return  # a worker that only samples or scores holds the weights alone
    cuda = (args.device or ("cuda" if torch.cuda.is_available() else "cpu")).startswith("cuda")
    device_bytes = (
        int(args.device_memory_gib * 2**30)
        if args.device_memory_gib
        else (torch.cuda.get_device_properties(0).total_memory if cuda else None)
    )
    if device_bytes is None:
        return
    if isinstance(model, dict):
        config = qwen3_config(**model)
    else:
        from transformers import AutoConfig

        source = model
        if (model / MANIFEST).is_file():
            manifest = json.loads((model / MANIFEST).read_text())
            if manifest["lora"] is None:
                source = (
                    model / "model"
                )  # a full checkpoint: trained whole, or the base of a new adapter (a rank given)
                lora = lora if args.lora_rank else None
            else:
                lora = LoraSpec(**{**manifest["lora"], "targets": tuple(manifest["lora"]["targets"])})
                source = manifest["base"].get("path")
                if source is None:
                    config = qwen3_config(**manifest["base"]["config"])
        if source is not None:
            config = AutoConfig.from_pretrained(source)
    total, trainable = count_parameters(
        config, lora.targets if lora else QWEN3_LORA_TARGETS, lora.rank if lora else None
    )
    weight_bytes = 2 if cuda else 4
    static = static_bytes(
        total, trainable, full=lora is None, weight_bytes=weight_bytes, reference=args.reference and lora is None
    )
    tokens = args.plan_tokens or PLAN_TOKENS
    acts = activation_bytes(
        config,
        tokens,
        micro_batch=args.plan_micro_batch,
        checkpointing=args.gradient_checkpointing,
        lora_rank=lora.rank if lora else 0,
        act_bytes=weight_bytes,
    )
    parts = {k: v for k, v in static.items() if k != "total"} | acts
    why = refusal(parts, device_bytes, full=lora is None, params=total, checkpointing=args.gradient_checkpointing)
    plan = f"{args.plan_micro_batch} × {tokens} tokens a forward pass, gradient checkpointing {'on' if args.gradient_checkpointing else 'off'}"
    if why:
        raise SystemExit(f"mlepipe-worker: {why} (planned: {plan})")
    print(
        f"mlepipe-worker: training needs about {sum(parts.values()) / 2**30:.1f} GiB ({plan}) of {device_bytes / 2**30:.1f} GiB",
        file=sys.stderr,
    )


def build(args: argparse.Namespace):
    import torch
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    from .checkpoint import newest_checkpoint
    from .model import MANIFEST, QWEN3_TINY, LoraSpec, build_policy, load_policy, train_tokenizer
    from .state import Worker

    if args.threads:
        torch.set_num_threads(args.threads)
    rank = 16 if args.lora_rank is None else args.lora_rank
    lora = LoraSpec(rank=rank, alpha=args.lora_alpha or 2 * rank) if rank > 0 else None

    def fast_tokenizer(path: str | Path) -> PreTrainedTokenizerFast:
        # The worker reads the tokenizer's own serialisation (its identity, token offsets): only a fast one has it.
        tok = AutoTokenizer.from_pretrained(path)
        if not isinstance(tok, PreTrainedTokenizerFast):
            raise SystemExit(f"mlepipe-worker: {path}: the tokenizer is not a fast (tokenizer.json) one")
        return tok

    tok = fast_tokenizer(args.tokenizer) if args.tokenizer else None
    if args.tiny:
        tok = tok or train_tokenizer(tiny_corpus(), vocab_size=384)
        check_memory(args, {**QWEN3_TINY, "vocab_size": len(tok)}, lora)
        policy = build_policy({**QWEN3_TINY, "vocab_size": len(tok)}, tokenizer=tok, lora=lora, device=args.device or "cpu", seed=args.seed,
                              gradient_checkpointing=args.gradient_checkpointing, reference=args.reference and lora is None)  # fmt: skip
        model_id = f"tiny-qwen3-seed{args.seed}"
    else:
        path = Path(args.model)
        if not path.is_dir():
            raise SystemExit(f"mlepipe-worker: --model {path}: no such directory")
        check_memory(args, path, lora)
        full_checkpoint = (path / MANIFEST).is_file() and json.loads((path / MANIFEST).read_text())["lora"] is None
        if full_checkpoint and lora is not None and args.lora_rank:
            # LoRA over a full checkpoint (after a full SFT): its weights are the base, and the new adapter starts at zero.
            tokenizer = tok or (
                fast_tokenizer(path / "tokenizer") if (path / "tokenizer").is_dir() else fast_tokenizer(path / "model")
            )
            policy = build_policy(
                str(path / "model"),
                tokenizer=tokenizer,
                lora=lora,
                device=args.device,
                gradient_checkpointing=args.gradient_checkpointing,
            )
        elif (path / MANIFEST).is_file():
            # A LoRA checkpoint goes on with its own adapter, whatever --lora-rank says; a full one trains whole.
            policy = load_policy(
                path, device=args.device, gradient_checkpointing=args.gradient_checkpointing, reference=args.reference
            )
        else:
            policy = build_policy(str(path), tokenizer=tok or fast_tokenizer(path), lora=lora, device=args.device,
                                  gradient_checkpointing=args.gradient_checkpointing, reference=args.reference and lora is None)  # fmt: skip
        model_id = path.name
    worker = Worker(policy, model_id=model_id, ckpt_dir=Path(args.ckpt_dir), lr=args.lr)
    if args.resume:
        found = newest_checkpoint(Path(args.resume))
        if found is None:
            print(f"mlepipe-worker: no complete checkpoint in {args.resume}; starting at step 0", file=sys.stderr)
        else:
            worker.restore(found)
            print(f"mlepipe-worker: resumed from {found} (step {worker.step})", file=sys.stderr)
    return worker


def serve(args: argparse.Namespace) -> None:
    import uvicorn

    from .server import create_app

    worker = build(args)
    # Binding here (not in uvicorn) lets --port 0 report the port it got.
    sock = socket.create_server((args.host, args.port))
    host, port = sock.getsockname()[:2]

    def ready() -> None:
        print(f"mlepipe-worker listening on http://{host}:{port}", flush=True)

    app = create_app(worker, on_ready=ready, max_batch_rows=args.max_batch_rows)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])


def main(argv: list[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        if args.command == "tiny":
            from .tiny import corpus_texts, write_tiny

            corpus = corpus_texts(args.corpus) if args.corpus else tiny_corpus()
            out, vocab = write_tiny(
                args.out, corpus, vocab_size=args.vocab, context=args.context, seed=args.seed, preset=args.preset
            )
            print(
                f"mlepipe-worker: a tiny Qwen3 ({args.preset} preset, context {args.context} tokens, vocabulary {vocab}) in {out}"
            )
            return
        serve(args)
    except (OSError, ValueError) as err:
        raise SystemExit(f"mlepipe-worker: {err}") from None


if __name__ == "__main__":
    main()
