"""Chat requests waiting for the weights thread, batched: when one generate call starts it takes every chat
request that is waiting (up to `max_rows` sampled rows) and samples them together, each with its own sampling
parameters, seed and length limit (generate.generate_groups), each answered as soon as its own rows end.

Order with the other weights operations is kept: a request is only batched with requests that arrived
between the same two updates (or scores, saves, loads), so no reply comes from weights it should not see.

How long a request waits is the worker's to say, not the client's to guess: `status(id)` (served at
`GET /v1/requests/{id}`) tells whether the request with that `X-Request-Id` is still queued or running, and
since when. A client counts its timeout from when the worker started the request, and while it waits it asks
again, so a live worker with a long queue is not mistaken for a dead one (agents/llm/client.ts). A request whose
client went away is dropped from the queue, or stops sampling at its next token, so that a client's retry
does not leave the abandoned request's work in front of it.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from .protocol import ChatRequest
from .state import HttpError, Worker

# How often a waiting request looks whether its client is still connected.
DISCONNECT_POLL_S = 0.2


@dataclass
class Entry:
    req: ChatRequest
    id: str
    epoch: int
    future: asyncio.Future
    arrived: float = field(default_factory=time.monotonic)
    started: float | None = None
    batch: dict[str, Any] | None = None
    cancelled: bool = False


class ChatQueue:
    def __init__(self, worker: Worker, *, max_rows: int = 64):
        self.worker = worker
        self.max_rows = max_rows
        self._lock = threading.Lock()
        self._pending: list[Entry] = []
        self._known: dict[str, Entry] = {}
        # Bumped when any other weights operation is queued: requests batch only within one epoch.
        self.epoch = 0
        self.stats = {"batches": 0, "requests": 0, "largest": 0, "dropped": 0}

    def barrier(self) -> None:
        """Called (on the event loop) as an update, score, save or load is queued behind the waiting chats."""
        self.epoch += 1

    def status(self, request_id: str) -> dict[str, Any]:
        e = self._known.get(request_id)
        now = time.monotonic()
        if e is None:
            return {"id": request_id, "state": "unknown"}
        if e.started is None:
            return {"id": request_id, "state": "queued", "queued_s": now - e.arrived}
        return {"id": request_id, "state": "running", "queued_s": e.started - e.arrived, "running_s": now - e.started}

    def health(self) -> dict[str, Any]:
        with self._lock:
            queued = sum(1 for e in self._pending if not e.cancelled)
        return {**self.stats, "queued": queued}

    async def submit(
        self, req: ChatRequest, request_id: str | None, on_weights: Callable[..., Any], disconnected: Callable[[], Any]
    ) -> dict[str, Any] | None:
        """Queues `req`, asks the weights thread for a batch, and waits for the answer; None when the client
        disconnected first (the request is then dropped, or stops at its next token)."""
        loop = asyncio.get_running_loop()
        e = Entry(req, request_id or uuid.uuid4().hex, self.epoch, loop.create_future())
        with self._lock:
            self._pending.append(e)
            self._known[e.id] = e
        # One batch job per request: the first that runs takes every waiting request of its epoch; the others
        # find theirs already taken and return at once.
        job = asyncio.ensure_future(on_weights(self._run, e.epoch, loop))
        try:
            while not e.future.done():
                await asyncio.wait({e.future}, timeout=DISCONNECT_POLL_S)
                if not e.future.done() and await disconnected():
                    e.cancelled = True
                    self.stats["dropped"] += 1
                    return None
            result = e.future.result()
        finally:
            self._known.pop(e.id, None)
            job.add_done_callback(
                lambda j: j.cancelled() or j.exception()
            )  # a batch's failure reaches its entries, not the job
        if isinstance(result, HttpError):
            raise result
        return {**result, "batch": e.batch}

    def _take(self, epoch: int) -> list[Entry]:
        with self._lock:
            batch: list[Entry] = []
            rest: list[Entry] = []
            rows = 0
            for e in self._pending:
                if e.cancelled:
                    continue
                if e.epoch == epoch and (not batch or rows + e.req.n <= self.max_rows):
                    batch.append(e)
                    rows += e.req.n
                else:
                    rest.append(e)
            self._pending = rest
        return batch

    def _run(self, epoch: int, loop: asyncio.AbstractEventLoop) -> None:
        """On the weights thread: one generate call over every request waiting in `epoch`."""
        batch = self._take(epoch)
        if not batch:
            return
        now = time.monotonic()
        info = {"requests": len(batch), "rows": sum(e.req.n for e in batch)}
        for e in batch:
            e.started = now
            e.batch = {**info, "queued_s": now - e.arrived}
        self.stats["batches"] += 1
        self.stats["requests"] += len(batch)
        self.stats["largest"] = max(self.stats["largest"], len(batch))

        def deliver(i: int, result: Any) -> None:
            loop.call_soon_threadsafe(_settle, batch[i].future, result, None)

        try:
            self.worker.chat_batch([e.req for e in batch], deliver, [_cancelled(e) for e in batch])
        except Exception as err:  # every request of the batch gets the failure as its answer
            # Each answer is handed `err` now: Python unbinds it when this except clause ends, before the loop
            # runs the callbacks.
            for e in batch:
                loop.call_soon_threadsafe(_settle, e.future, None, err)


def _settle(future: asyncio.Future, result: Any, err: BaseException | None) -> None:
    """On the event loop: the answer to one request, unless it has one already."""
    if future.done():
        return
    if err is not None:
        future.set_exception(err)
    else:
        future.set_result(result)


def _cancelled(e: Entry) -> Callable[[], bool]:
    return lambda: e.cancelled
