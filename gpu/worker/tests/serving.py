"""Helpers for the HTTP tests: start the real worker (`python -m mlepipe_worker serve`) in a subprocess and
build exact-token batches from what it sampled."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
from pathlib import Path

import httpx

WORKER_ROOT = Path(__file__).resolve().parents[1]


class Served:
    def __init__(self, proc: subprocess.Popen, url: str, log: list[str]):
        self.proc, self.url, self.log = proc, url, log
        self.http = httpx.Client(base_url=url, timeout=httpx.Timeout(None))

    def get(self, path: str) -> httpx.Response:
        return self.http.get(path)

    def post(self, path: str, body) -> httpx.Response:
        return self.http.post(path, json=body)

    def ok(self, path: str, body=None) -> dict:
        r = self.get(path) if body is None else self.post(path, body)
        assert r.status_code == 200, f"{path}: HTTP {r.status_code}: {r.text}"
        return r.json()

    def stop(self) -> None:
        self.http.close()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_worker(*args: str) -> Served:
    """Starts the worker on a free port and returns once it prints that it listens (or fails with its stderr)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mlepipe_worker", "serve", "--port", "0", "--threads", "1", *args],
        cwd=WORKER_ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    errors: list[str] = []
    # Draining stderr keeps a chatty worker from blocking on a full pipe.
    threading.Thread(target=lambda: errors.extend(proc.stderr), daemon=True).start()
    for line in proc.stdout:
        if line.startswith("mlepipe-worker listening on "):
            return Served(proc, line.split(" on ", 1)[1].strip(), errors)
    proc.wait()
    raise AssertionError(f"the worker exited ({proc.returncode}) before listening:\n{''.join(errors)}")


def identity(tokenizer) -> dict[str, str]:
    sha = lambda s: hashlib.sha256(s.encode()).hexdigest()  # noqa: E731
    return {
        "tokenizer_sha256": sha(tokenizer.backend_tokenizer.to_str()),
        "chat_template_sha256": sha(tokenizer.chat_template),
    }


def trajectory(i: int, advantage: float, turns: list[dict] | None, *, masked: bool = False) -> dict:
    return {
        "id": f"g/0/t#{i}",
        "group_id": "g/0/t",
        "task_id": "t",
        "sample": i,
        "reward": advantage,
        "advantage": advantage,
        "turn_advantages": [advantage] * max(1, len(turns or [])),
        "masked": masked,
        "mask_reason": None,
        "variables": {},
        "messages": [],
        "turns": turns,
    }


def batch(trajectories: list[dict], ident: dict | None, *, step: int = 1, lr: float = 1e-3, **extra) -> dict:
    body = {
        "format": "mlepipe-grpo-batch/1",
        "step": step,
        "advantage": "grpo",
        "group_size": len(trajectories),
        "hyper": {"lr": lr, "clip_low": 0.2, "clip_high": 0.28, "kl": 0.0, "temperature": 1.0},
        "trajectories": trajectories,
        "groups": [{"group_id": "g/0/t", "mean": 0.0, "std": 1.0, "zero_signal": False}],
        **extra,
    }
    if ident is not None:
        body["tokenizer"] = ident
    return body
