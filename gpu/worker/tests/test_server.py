"""The worker's HTTP service, driven over HTTP: a real `python -m mlepipe_worker serve` on a free port with a
tiny random Qwen3 and the tokenizer trained in conftest."""

import math

import pytest
from serving import batch, identity, start_worker, trajectory

from mlepipe_worker.model import CHAT_TEMPLATE

MESSAGES = [
    {"role": "system", "content": "you are an ml agent"},
    {"role": "user", "content": "the agent reads the csv"},
]


@pytest.fixture(scope="module")
def tok_dir(tokenizer, tmp_path_factory):
    d = tmp_path_factory.mktemp("tokenizer")
    tokenizer.save_pretrained(d)
    return d


@pytest.fixture(scope="module")
def ckpt_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("checkpoints")


@pytest.fixture(scope="module")
def worker(tok_dir, ckpt_dir):
    served = start_worker("--tiny", "--tokenizer", str(tok_dir), "--lora-rank", "8", "--ckpt-dir", str(ckpt_dir))
    yield served
    served.stop()


def sample(worker, n: int = 2, max_tokens: int = 6, seed: int = 3) -> dict:
    return worker.ok(
        "/v1/chat/completions",
        {
            "model": "policy",
            "messages": MESSAGES,
            "n": n,
            "temperature": 1.0,
            "max_tokens": max_tokens,
            "seed": seed,
            "logprobs": True,
        },
    )


def score(worker, prompt: list[int], replies: list[list[int]]) -> list[dict]:
    return worker.ok("/score", {"items": [{"prompt_ids": prompt, "token_ids": r} for r in replies]})["results"]


def test_health_names_the_tokenizer_and_template_by_hash(worker, tokenizer):
    h = worker.ok("/health")
    assert h["status"] == "ok" and h["step"] == 0 and h["device"] == "cpu"
    assert {k: h[k] for k in ("tokenizer_sha256", "chat_template_sha256")} == identity(tokenizer)
    assert (
        h["chat_template_sha256"] == identity(tokenizer)["chat_template_sha256"]
        and tokenizer.chat_template == CHAT_TEMPLATE
    )
    assert h["memory"]["kind"] == "rss" and h["memory"]["bytes"] > 0


def test_completions_return_the_sampled_ids_and_logprobs_that_score_reproduces(worker, tokenizer):
    out = sample(worker, n=3)
    prompt = out["prompt_token_ids"]
    rendered = tokenizer.apply_chat_template(MESSAGES, tokenize=False, add_generation_prompt=True)
    assert prompt == list(tokenizer(rendered, add_special_tokens=False)["input_ids"])
    assert len(out["choices"]) == 3
    replies = [c["token_ids"] for c in out["choices"]]
    for c in out["choices"]:
        assert len(c["logprobs"]["content"]) == len(c["token_ids"]) > 0
        assert all(e["logprob"] <= 0 for e in c["logprobs"]["content"])
        assert c["finish_reason"] in ("stop", "length")
    for c, s in zip(out["choices"], score(worker, prompt, replies)):
        sampled = [e["logprob"] for e in c["logprobs"]["content"]]
        assert s["logprobs"] == pytest.approx(sampled, abs=1e-4)
        assert s["sum"] == pytest.approx(sum(sampled), abs=1e-3)
    # The same context given as messages is rendered to the same ids.
    by_messages = worker.ok("/score", {"items": [{"messages": MESSAGES, "token_ids": replies[0]}]})["results"][0]
    assert by_messages["prompt_ids"] == prompt


def test_updates_raise_the_favoured_reply_and_lower_the_other(worker, tokenizer):
    ident = identity(tokenizer)
    out = sample(worker, n=2, seed=11)
    prompt = out["prompt_token_ids"]
    good, bad = (c["token_ids"] for c in out["choices"])
    before = [s["sum"] for s in score(worker, prompt, [good, bad])]
    step0 = worker.ok("/health")["step"]
    for k in range(3):
        # On-policy every step: the old log-probabilities are the current weights'.
        now = score(worker, prompt, [good, bad])
        turns = [
            [{"prompt_ids": prompt, "token_ids": ids, "logprobs": s["logprobs"]}] for ids, s in zip((good, bad), now)
        ]
        res = worker.ok(
            "/update", batch([trajectory(0, 1.0, turns[0]), trajectory(1, -1.0, turns[1])], ident, step=k + 1, lr=5e-3)
        )
        assert res["step"] == step0 + k + 1 and res["skipped"] is False
        assert res["loss_tokens"] == len(good) + len(bad) and res["sequences"] == 2
        for key in ("loss", "clip_frac", "grad_norm", "entropy", "tokens_per_s"):
            assert math.isfinite(res[key]), key
        assert res["grad_norm"] > 0
    after = [s["sum"] for s in score(worker, prompt, [good, bad])]
    assert after[0] > before[0] and after[1] < before[1], (before, after)


def test_a_batch_of_masked_trajectories_takes_no_step(worker):
    step = worker.ok("/health")["step"]
    res = worker.ok("/update", batch([trajectory(0, 0.0, None, masked=True)], None))
    assert res["skipped"] is True and res["step"] == step


def test_save_then_load_restores_the_weights_and_resume_starts_from_the_newest(worker, tokenizer, tok_dir, ckpt_dir):
    out = sample(worker, n=1, seed=5)
    prompt, reply = out["prompt_token_ids"], out["choices"][0]["token_ids"]
    saved = worker.ok("/save", {"tag": "keep", "step": 7})
    at_save = score(worker, prompt, [reply])[0]["logprobs"]
    step = saved["step"]
    assert (ckpt_dir / "keep" / "state.json").is_file()
    assert not [p for p in ckpt_dir.iterdir() if p.name.startswith(".")], "a temporary folder was left behind"

    turns = [{"prompt_ids": prompt, "token_ids": reply, "logprobs": at_save}]
    worker.ok("/update", batch([trajectory(0, 1.0, turns)], identity(tokenizer), lr=5e-2))
    moved = score(worker, prompt, [reply])[0]["logprobs"]
    assert moved != pytest.approx(at_save, abs=1e-6)

    loaded = worker.ok("/load", {"path": saved["path"]})
    assert loaded["step"] == step == worker.ok("/health")["step"]
    assert score(worker, prompt, [reply])[0]["logprobs"] == pytest.approx(at_save, abs=1e-6)

    # A second save with the same tag replaces the first whole; a fresh worker resumes from the newest.
    worker.ok("/update", batch([trajectory(0, 1.0, turns)], identity(tokenizer), lr=5e-2))
    newer = worker.ok("/save", {"tag": "newer"})
    expect = score(worker, prompt, [reply])[0]["logprobs"]
    again = start_worker(
        "--tiny",
        "--tokenizer",
        str(tok_dir),
        "--lora-rank",
        "8",
        "--ckpt-dir",
        str(ckpt_dir),
        "--resume",
        str(ckpt_dir),
    )
    try:
        assert again.ok("/health")["step"] == newer["step"] == step + 1
        assert score(again, prompt, [reply])[0]["logprobs"] == pytest.approx(expect, abs=1e-6)
    finally:
        again.stop()


def test_a_batch_from_another_tokenizer_is_refused_with_both_hashes(worker, tokenizer):
    out = sample(worker, n=1)
    c = out["choices"][0]
    turns = [
        {
            "prompt_ids": out["prompt_token_ids"],
            "token_ids": c["token_ids"],
            "logprobs": [e["logprob"] for e in c["logprobs"]["content"]],
        }
    ]
    other = {**identity(tokenizer), "chat_template_sha256": "0" * 64}
    step = worker.ok("/health")["step"]
    r = worker.post("/update", batch([trajectory(0, 1.0, turns)], other))
    assert r.status_code == 409, r.text
    body = r.json()
    assert body["given"] == other and body["worker"] == identity(tokenizer)
    assert worker.ok("/health")["step"] == step


@pytest.mark.parametrize(
    "breaks, loc",
    [
        (lambda b: b["trajectories"][0].update(sample=-1), "trajectories.0.sample"),
        (lambda b: b["hyper"].pop("lr"), "hyper.lr"),
        (lambda b: b["trajectories"][0].update(surprise=1), "trajectories.0.surprise"),
        (lambda b: b["trajectories"][0]["turns"][0]["logprobs"].pop(), "trajectories.0.turns.0.logprobs"),
        (
            lambda b: b["trajectories"][0]["turns"][0]["token_ids"].__setitem__(1, 10**6),
            "trajectories.0.turns.0.token_ids.1",
        ),
        (lambda b: b["trajectories"][0]["turns"][0].update(prompt_ids=[]), "trajectories.0.turns.0.prompt_ids"),
        (lambda b: b["trajectories"][0].update(turns=None), "trajectories.0.turns"),
        (lambda b: b.pop("tokenizer"), "tokenizer"),
        (lambda b: b.update(loss_agg_mode="seq-sum"), "loss_agg_mode"),
    ],
)
def test_a_bad_batch_is_refused_naming_the_field(worker, tokenizer, breaks, loc):
    turns = [{"prompt_ids": [1, 5, 7], "token_ids": [9, 11, 2], "logprobs": [-1.0, -2.0, -0.5]}]
    body = batch([trajectory(0, 1.0, turns)], identity(tokenizer))
    breaks(body)
    step = worker.ok("/health")["step"]
    r = worker.post("/update", body)
    assert r.status_code == 422, r.text
    assert r.json()["loc"] == loc and loc in r.json()["error"]
    assert worker.ok("/health")["step"] == step


def test_a_stop_string_ends_the_text_and_keeps_the_tokens_that_were_sampled(worker, tokenizer):
    first = worker.ok("/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 16, "seed": 21, "logprobs": True})[
        "choices"
    ][0]
    ids = first["token_ids"]
    k = next(i for i in range(1, len(ids)) if tokenizer.decode([ids[i]]).strip().isalnum())
    stop = tokenizer.decode([ids[k]]).strip()
    again = worker.ok(
        "/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 16, "seed": 21, "logprobs": True, "stop": [stop]}
    )["choices"][0]
    cut = again["token_ids"]
    assert again["finish_reason"] == "stop"
    assert cut == ids[: len(cut)] and len(cut) <= k + 1
    # The last kept token is the one that completed the stop string; the text ends where the string begins.
    assert stop in tokenizer.decode(cut) and stop not in tokenizer.decode(cut[:-1])
    full = tokenizer.decode(cut)
    assert again["message"]["content"] == full[: full.find(stop)]
    assert len(again["logprobs"]["content"]) == len(cut)


def test_token_bytes_add_up_to_the_reply(worker, tokenizer):
    out = worker.ok(
        "/v1/chat/completions", {"messages": MESSAGES, "max_tokens": 12, "seed": 4, "logprobs": True, "n": 2}
    )
    for c in out["choices"]:
        raw = b"".join(bytes(e["bytes"]) for e in c["logprobs"]["content"])
        # Decoding every token on its own would turn each half of a split character into U+FFFD.
        assert raw.decode("utf-8", errors="replace") == tokenizer.decode(c["token_ids"])


def test_loading_a_folder_that_is_no_checkpoint_is_404_and_changes_nothing(worker, tmp_path):
    step = worker.ok("/health")["step"]
    r = worker.post("/load", {"path": str(tmp_path)})
    assert r.status_code == 404, r.text
    assert "state.json" in r.json()["error"]
    assert worker.ok("/health")["step"] == step
