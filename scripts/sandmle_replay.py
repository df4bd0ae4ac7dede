"""The scripted server of scripts/check-sandmle.sh's mlepipe side: an OpenAI-compatible endpoint that replays each
scenario's replies in order, and the few endpoints of a trainer worker (docs/training.md, the trainer protocol) so
that a `grpo` node can run its rollouts on it. A request's scenario is the one whose id its opening messages name;
each model name (the eval's, the grpo's) counts its own replies. The last reply repeats if a run asks for more.
Updates change nothing: each batch's trajectories (reward, mask) are written to the log for the comparison.
"""

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sandmle_scenarios import scenarios

TOKENIZER = {"tokenizer_sha256": "a" * 64, "chat_template_sha256": "b" * 64}


def scenario_of(messages: list[dict], ids: list[str]) -> str | None:
    """The one scenario id the conversation's opening names, or None."""
    text = "\n".join(str(m.get("content", "")) for m in messages[:2])
    hits = [cid for cid in ids if cid in text]
    return hits[0] if len(hits) == 1 else None


class Replay:
    def __init__(self, log_path: str):
        self.replies = scenarios()
        self.ids = list(self.replies)
        self.counts: dict[tuple[str, str], int] = {}
        self.steps = 0
        self.lock = threading.Lock()
        self.log = open(log_path, "a", encoding="utf-8")

    def record(self, entry: dict) -> None:
        with self.lock:
            self.log.write(json.dumps(entry) + "\n")
            self.log.flush()

    def chat(self, body: dict) -> tuple[int, dict]:
        cid = scenario_of(body.get("messages", []), self.ids)
        if cid is None:
            return 400, {"error": {"message": "no scenario id in the prompt", "type": "scripted"}}
        with self.lock:
            n = self.counts.get((body["model"], cid), 0)
            self.counts[(body["model"], cid)] = n + 1
        script = self.replies[cid]
        content = script[min(n, len(script) - 1)]
        self.record({"kind": "request", "model": body["model"], "scenario": cid, "n": n})
        words = content.split(" ")[:3]
        logprobs = (
            {"content": [{"token": w, "logprob": -0.5, "bytes": None, "top_logprobs": []} for w in words]}
            if body.get("logprobs")
            else None
        )
        ids = {"token_ids": [7 + i for i in range(len(words))]} if logprobs else {}
        choice = {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        return 200, {
            "id": f"replay-{cid}-{n}",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [{**choice, "logprobs": logprobs, **ids}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
            "prompt_token_ids": [1, 2, 3],
        }

    def update(self, batch: dict) -> dict:
        keep = ("id", "task_id", "reward", "advantage", "masked", "mask_reason")
        trajectories = [{k: t.get(k) for k in keep} for t in batch.get("trajectories", [])]
        self.record({"kind": "update", "step": batch.get("step"), "trajectories": trajectories})
        with self.lock:
            self.steps += 1
            return {"step": self.steps, "loss": 0.0, "tokens": 0}


def handler(replay: Replay):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def send(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health":
                return self.send(200, {"status": "ok", "step": replay.steps, "model": "replay", **TOKENIZER})
            self.send(404, {"error": "no such endpoint"})

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            if self.path == "/v1/chat/completions":
                return self.send(*replay.chat(body))
            if self.path == "/update":
                return self.send(200, replay.update(body))
            if self.path == "/save":
                return self.send(200, {"path": f"/ckpt/{body.get('tag', 'last')}"})
            self.send(404, {"error": "no such endpoint"})

    return Handler


def main(port_file: str, log_path: str) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(Replay(log_path)))
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(port_file + ".tmp", port_file)
    print(f"check-sandmle: scripted server on port {server.server_address[1]}", file=sys.stderr)
    server.serve_forever()
