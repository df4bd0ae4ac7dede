"""The worker's HTTP service (FastAPI): the current policy behind an
OpenAI-compatible chat endpoint for rollouts, plus /update, /score, /sft,
/eval_loss, /save, /load and /health for the trainer (schemas/trainer/endpoints.schema.json).

Everything that touches the weights runs on one thread (a single-worker
executor), one operation at a time, in arrival order; the chat requests waiting
when a generate call starts are sampled together in it (chatqueue.py). /health
reads the step without waiting for it.
"""

from __future__ import annotations

import asyncio
import sys
import traceback
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from typing import Any, Callable

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from .batch import BatchError
from .chatqueue import ChatQueue
from .protocol import Batch, ChatRequest, EvalLossRequest, LoadRequest, SaveRequest, ScoreRequest, SftRequest
from .state import HttpError, Worker


def _loc(parts: tuple[Any, ...]) -> str:
    # FastAPI prefixes body fields with "body"; the client knows only its own document.
    rest = [str(p) for p in parts]
    if rest and rest[0] == "body":
        rest = rest[1:]
    return ".".join(rest) or "(body)"


def create_app(worker: Worker, *, on_ready: Callable[[], None] | None = None, max_batch_rows: int = 64) -> FastAPI:
    weights = ThreadPoolExecutor(max_workers=1, thread_name_prefix="weights")
    chats = ChatQueue(worker, max_rows=max_batch_rows)

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        if on_ready is not None:
            on_ready()
        yield
        weights.shutdown(wait=True, cancel_futures=True)

    app = FastAPI(title="mlepipe trainer worker", lifespan=lifespan)

    async def sampling(fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(weights, fn, *args)

    async def on_weights(fn: Callable[..., Any], *args: Any) -> Any:
        # Chats that arrive after this are not batched with those before it.
        chats.barrier()
        return await sampling(fn, *args)

    @app.exception_handler(RequestValidationError)
    async def invalid(_req: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{"loc": _loc(tuple(e.get("loc", ()))), "msg": e.get("msg", "")} for e in exc.errors()]
        first = errors[0] if errors else {"loc": "(body)", "msg": "invalid"}
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return JSONResponse(
            status_code=422,
            content={"error": f"{first['loc']}: {first['msg']}{more}", "loc": first["loc"], "detail": errors},
        )

    @app.exception_handler(BatchError)
    async def refused(_req: Request, exc: BatchError) -> JSONResponse:
        return JSONResponse(
            status_code=422,
            content={"error": str(exc), "loc": exc.loc, "detail": [{"loc": exc.loc, "msg": exc.message}]},
        )

    @app.exception_handler(HttpError)
    async def answered(_req: Request, exc: HttpError) -> JSONResponse:
        return JSONResponse(status_code=exc.status, content=exc.body)

    @app.exception_handler(Exception)
    async def crashed(_req: Request, exc: Exception) -> JSONResponse:
        traceback.print_exception(exc, file=sys.stderr)
        return JSONResponse(status_code=500, content={"error": f"the worker failed: {type(exc).__name__}: {exc}"})

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {**worker.health(), "chat": chats.health()}

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": worker.model_id, "object": "model", "owned_by": "mlepipe"}]}

    @app.post("/v1/chat/completions")
    async def chat(req: ChatRequest, request: Request) -> Any:
        if req.stream:
            raise HttpError(400, "streaming is not supported: send stream: false")
        out = await chats.submit(req, request.headers.get("x-request-id"), sampling, request.is_disconnected)
        # 499: the client closed the connection before the answer (nobody reads this).
        return out if out is not None else JSONResponse(status_code=499, content={"error": "the client disconnected"})

    @app.get("/v1/requests/{request_id}")
    async def request_status(request_id: str) -> dict[str, Any]:
        return chats.status(request_id)

    @app.post("/score")
    async def score(req: ScoreRequest) -> dict[str, Any]:
        return await on_weights(worker.score, req)

    @app.post("/update")
    async def update(batch: Batch) -> dict[str, Any]:
        return await on_weights(worker.update, batch)

    @app.post("/sft")
    async def sft(req: SftRequest) -> dict[str, Any]:
        return await on_weights(worker.sft, req)

    @app.post("/eval_loss")
    async def eval_loss(req: EvalLossRequest) -> dict[str, Any]:
        return await on_weights(worker.eval_loss, req)

    @app.post("/save")
    async def save(req: SaveRequest) -> dict[str, Any]:
        return await on_weights(worker.save, req)

    @app.post("/load")
    async def load(req: LoadRequest) -> dict[str, Any]:
        return await on_weights(worker.load, req)

    return app
