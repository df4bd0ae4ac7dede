"""The service in this process (uvicorn on a thread), where a test can reach inside: running out of memory in a
step, and requests that touch the weights never overlapping."""

import threading
from concurrent.futures import ThreadPoolExecutor

import torch
from serving import batch, identity, trajectory

import mlepipe_worker.state as state_mod

MESSAGES = [{"role": "user", "content": "the agent reads the csv"}]


def one_turn_batch(http, tokenizer) -> dict:
    out = http.post(
        "/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 4, "seed": 1, "logprobs": True}
    ).json()
    c = out["choices"][0]
    turns = [
        {
            "prompt_ids": out["prompt_token_ids"],
            "token_ids": c["token_ids"],
            "logprobs": [e["logprob"] for e in c["logprobs"]["content"]],
        }
    ]
    return batch([trajectory(0, 1.0, turns)], identity(tokenizer), lr=1e-2)


def test_out_of_memory_in_a_step_is_507_and_the_model_stays_usable(served, tokenizer, monkeypatch):
    worker, http = served
    body = one_turn_batch(http, tokenizer)
    real = state_mod.update_step

    def runs_out(policy, optimizer, seqs, cfg):
        # Leave gradients behind, as a backward pass cut short by the allocator would.
        for p in policy.trainable_parameters():
            p.grad = torch.ones_like(p)
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB")

    monkeypatch.setattr(state_mod, "update_step", runs_out)
    before = {n: p.detach().clone() for n, p in worker.policy.model.named_parameters() if p.requires_grad}
    r = http.post("/update", json=body)
    assert r.status_code == 507, r.text
    assert "out of memory" in r.json()["error"] and worker.step == 0
    assert all(p.grad is None for p in worker.policy.trainable_parameters())
    assert all(torch.equal(before[n], p) for n, p in worker.policy.model.named_parameters() if p.requires_grad)

    monkeypatch.setattr(state_mod, "update_step", real)
    assert http.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 2}).status_code == 200
    ok = http.post("/update", json=body)
    assert ok.status_code == 200 and ok.json()["step"] == 1


def test_sampling_never_runs_during_an_update(served, tokenizer, monkeypatch):
    worker, http = served
    body = one_turn_batch(http, tokenizer)
    inside: list[str] = []
    overlaps: list[tuple[str, ...]] = []
    guard = threading.Lock()

    def tracked(name, fn):
        def run(*args, **kw):
            with guard:
                if inside:
                    overlaps.append((*inside, name))
                inside.append(name)
            try:
                return fn(*args, **kw)
            finally:
                with guard:
                    inside.remove(name)

        return run

    monkeypatch.setattr(state_mod, "update_step", tracked("update", state_mod.update_step))
    monkeypatch.setattr(state_mod, "generate_groups", tracked("generate", state_mod.generate_groups))
    monkeypatch.setattr(state_mod, "score", tracked("score", state_mod.score))

    def call(i: int) -> int:
        if i % 3 == 0:
            return http.post("/update", json=body).status_code
        if i % 3 == 1:
            return http.post("/v1/chat/completions", json={"messages": MESSAGES, "max_tokens": 3, "n": 2}).status_code
        return http.post("/score", json={"items": [{"messages": MESSAGES, "token_ids": [5, 6, 7]}]}).status_code

    with ThreadPoolExecutor(6) as pool:
        codes = list(pool.map(call, range(12)))
    assert codes == [200] * 12
    assert overlaps == []
    assert worker.step == 4
