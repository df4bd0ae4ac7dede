"""Concurrent chat requests share one generate call: the requests waiting when it starts are batched, each keeps
its own sampling parameters, seed and length, and gets the reply it would get alone; a request whose client went
away is dropped from the queue, or stops sampling."""

import threading
import time

import httpx
import pytest

import mlepipe_worker.state as state_mod

MESSAGES = [{"role": "user", "content": "the agent reads the csv"}]
REQUESTS = [
    {"messages": MESSAGES, "max_tokens": 8, "seed": 1, "temperature": 1.0, "logprobs": True},
    {"messages": MESSAGES, "max_tokens": 3, "seed": 2, "temperature": 0.7, "top_p": 0.9, "logprobs": True},
    {
        "messages": [{"role": "user", "content": "the grader scores submission.csv with twelve features"}],
        "max_tokens": 6,
        "seed": 3,
        "logprobs": True,
        "n": 2,
    },
    {"messages": MESSAGES, "max_tokens": 5, "temperature": 0.0, "logprobs": True},
]


@pytest.fixture
def gated(monkeypatch):
    """generate_groups that records each call's group count and holds the weights thread while `hold` is set."""
    real = state_mod.generate_groups
    calls: list[int] = []
    entered, release = threading.Event(), threading.Event()
    hold = {"on": True, "until": None}

    def gate(policy, groups, **kw):
        calls.append(len(groups))
        if hold["on"]:
            hold["on"] = False
            entered.set()
            assert release.wait(60)
        if hold["until"] is not None:
            hold["until"](groups)
        return real(policy, groups, **kw)

    monkeypatch.setattr(state_mod, "generate_groups", gate)
    return calls, entered, release, hold


def until(check, what: str, seconds: float = 30.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def in_thread(fn):
    box: dict = {}
    t = threading.Thread(target=lambda: box.update(out=fn()), daemon=True)
    t.start()
    return t, box


def tokens(answer: dict) -> list[tuple[list[int], list[float]]]:
    return [(c["token_ids"], [e["logprob"] for e in c["logprobs"]["content"]]) for c in answer["choices"]]


def test_four_waiting_requests_are_one_batch_and_each_reply_is_what_it_is_alone(served, gated):
    worker, http = served
    calls, entered, release, _ = gated
    first, _ = in_thread(lambda: http.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 2}))
    assert entered.wait(60)
    posts = [
        in_thread(lambda i=i: http.post("/v1/chat/completions", json=REQUESTS[i], headers={"x-request-id": f"r{i}"}))
        for i in range(4)
    ]
    until(lambda: http.get("/health").json()["chat"]["queued"] == 4, "4 queued requests")
    status = http.get("/v1/requests/r0").json()
    assert status["state"] == "queued" and status["queued_s"] >= 0
    assert http.get("/v1/requests/nobody").json()["state"] == "unknown"
    release.set()
    first.join(60)
    answers = []
    for t, box in posts:
        t.join(60)
        assert box["out"].status_code == 200, box["out"].text
        answers.append(box["out"].json())
    assert calls == [1, 4]
    assert [a["batch"]["requests"] for a in answers] == [4] * 4 and answers[0]["batch"]["rows"] == 5
    health = http.get("/health").json()["chat"]
    assert health["largest"] == 4 and health["batches"] == 2 and health["queued"] == 0
    # Each request's own limit and n.
    assert [len(a["choices"]) for a in answers] == [1, 1, 2, 1]
    assert all(len(c["token_ids"]) <= r["max_tokens"] for a, r in zip(answers, REQUESTS) for c in a["choices"])
    for body, together in zip(REQUESTS, answers):
        alone = http.post("/v1/chat/completions", json=body).json()
        assert alone["batch"]["requests"] == 1
        for (ids_t, lp_t), (ids_a, lp_a) in zip(tokens(together), tokens(alone)):
            assert ids_t == ids_a
            assert all(abs(x - y) < 1e-4 for x, y in zip(lp_t, lp_a))


def test_a_request_whose_client_left_is_dropped_from_the_queue(served, gated):
    worker, http = served
    calls, entered, release, _ = gated
    first, _ = in_thread(lambda: http.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 2}))
    assert entered.wait(60)
    port = http.base_url.port

    def impatient():
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=0.5) as c:
            try:
                return c.post(
                    "/v1/chat/completions",
                    json={"messages": MESSAGES, "max_tokens": 4},
                    headers={"x-request-id": "gone"},
                )
            except httpx.TimeoutException:
                return None

    assert impatient() is None
    until(lambda: http.get("/health").json()["chat"]["dropped"] == 1, "the dropped request")
    assert http.get("/v1/requests/gone").json()["state"] == "unknown"
    kept, box = in_thread(lambda: http.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 3}))
    until(lambda: http.get("/health").json()["chat"]["queued"] == 1, "the kept request queued")
    release.set()
    first.join(60)
    kept.join(60)
    assert box["out"].status_code == 200 and box["out"].json()["batch"]["requests"] == 1
    assert calls == [1, 1]


def test_a_running_request_whose_client_left_is_told_to_stop(served, gated):
    worker, http = served
    calls, entered, release, hold = gated
    hold["on"] = False
    seen = []

    def wait_for_cancel(groups):
        until(lambda: groups[0].cancelled(), "the running request's cancel flag", 30)
        seen.append(True)

    hold["until"] = wait_for_cancel
    port = http.base_url.port
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=0.5) as c:
        with pytest.raises(httpx.TimeoutException):
            c.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 4})
    until(lambda: seen == [True], "the running group to see its cancel flag")
