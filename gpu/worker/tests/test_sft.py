"""Supervised fine-tuning: assistant-only loss masks from the chat template, truncation, a loss that falls on a
tiny set, and the /sft and /eval_loss endpoints in this process."""

import copy
from pathlib import Path

import pytest
import torch

from mlepipe_worker.sft import _nll_sum, _sequences, eval_loss, sft_step, tokenize_conversation, tokenize_examples
from mlepipe_worker.update import make_optimizer

CONVO = [
    {"role": "system", "content": "you are an ml agent"},
    {"role": "user", "content": "solve the task"},
    {"role": "assistant", "content": "the model reads the public csv."},
    {"role": "user", "content": "accuracy: 0.81"},
    {"role": "assistant", "content": "submission.csv"},
]


def decoded_loss_text(tokenizer, ex) -> list[str]:
    """The text of each maximal run of loss tokens."""
    runs, cur = [], []
    for t, m in zip(ex.input_ids, ex.loss_mask):
        if m:
            cur.append(t)
        elif cur:
            runs.append(tokenizer.decode(cur))
            cur = []
    if cur:
        runs.append(tokenizer.decode(cur))
    return runs


def test_only_the_assistant_replies_and_their_end_of_turn_carry_loss(tokenizer):
    ex = tokenize_conversation(tokenizer, CONVO, max_length=4096)
    assert ex.truncated == 0
    assert decoded_loss_text(tokenizer, ex) == ["the model reads the public csv.<|im_end|>", "submission.csv<|im_end|>"]
    # The whole rendering is there, in the template's order.
    assert tokenizer.decode(ex.input_ids) == tokenizer.apply_chat_template(CONVO, tokenize=False)


def test_long_conversations_are_cut_and_counted(tokenizer):
    full = tokenize_conversation(tokenizer, CONVO, max_length=4096)
    cut = tokenize_conversation(tokenizer, CONVO, max_length=20)
    assert len(cut.input_ids) == 20 and cut.truncated == len(full.input_ids) - 20
    assert cut.loss_mask == full.loss_mask[:20]


def test_under_qwen3s_template_earlier_reasoning_is_dropped_and_the_last_trained_as_rendered(tokenizer):
    tok = copy.deepcopy(tokenizer)
    # Qwen3's own template: a reply before the last user message keeps only what follows its reasoning;
    # the last reply's reasoning is rewritten as "<think>\n…\n</think>\n\n", the form the model generates.
    tok.chat_template = (Path(__file__).parent.parent / "mlepipe_worker" / "templates" / "qwen3.jinja").read_text(
        encoding="utf-8"
    )
    convo = [dict(m) for m in CONVO]
    convo[2]["content"] = "<think>the csv first</think>\nthe model reads the public csv."
    convo[4]["content"] = "<think>done</think>submission.csv"
    ex = tokenize_conversation(tok, convo, 4096)
    assert decoded_loss_text(tok, ex) == [
        "the model reads the public csv.<|im_end|>",
        "<think>\ndone\n</think>\n\nsubmission.csv<|im_end|>",
    ]
    with pytest.raises(ValueError, match=r"messages\.2: its content does not appear"):
        tokenize_conversation(_Rewriting(tok), convo, 4096)


class _Rewriting:
    """A tokenizer whose template rewrites every reply (the content cannot be found)."""

    def __init__(self, tok):
        self._tok = tok

    def apply_chat_template(self, messages, **kw):
        return self._tok.apply_chat_template(
            [{**m, "content": m["content"].upper()} if m["role"] == "assistant" else m for m in messages], **kw
        )

    def __getattr__(self, name):
        return getattr(self._tok, name)

    def __call__(self, *a, **kw):
        return self._tok(*a, **kw)


def test_a_conversation_without_a_reply_is_refused_by_index(tokenizer):
    with pytest.raises(ValueError, match=r"examples\.1: has no assistant message"):
        tokenize_examples(tokenizer, [CONVO, CONVO[:2]], 64)


def test_observation_tokens_get_no_gradient(make_policy, tokenizer):
    """The step's loss sends gradient only through the logits that predict assistant tokens: the rows of the
    logits whose next token is a prompt or observation token get exactly zero gradient."""
    policy = make_policy(lora=False)
    ex = tokenize_conversation(tokenizer, CONVO, max_length=4096)
    seen = {}

    def keep(_module, _inputs, output):
        output.retain_grad()
        seen["logits"] = output

    hook = policy.model.lm_head.register_forward_hook(keep)
    try:
        loss = _nll_sum(policy, _sequences([ex]))
        loss.backward()
    finally:
        hook.remove()
    # Row t predicts token t + 1; the last position predicts nothing, so the head computes no logits for it.
    assert seen["logits"].shape[1] == len(ex.input_ids) - 1
    row_grad = seen["logits"].grad[0].abs().sum(-1)
    observed = torch.tensor(ex.loss_mask[1:]) == 0
    assert bool(observed.any()) and bool((~observed).any())
    assert float(row_grad[observed].max()) == 0.0
    assert float(row_grad[~observed].min()) > 0.0


def test_an_observation_changes_nothing_in_the_step_but_the_context(make_policy, tokenizer):
    """Two conversations that differ only in an observation give gradients computed on the same targets: swapping the
    observation text leaves the number of loss tokens unchanged."""
    other = [dict(m) for m in CONVO]
    other[3]["content"] = "the grader scores submission.csv"
    a = tokenize_conversation(tokenizer, CONVO, 4096)
    b = tokenize_conversation(tokenizer, other, 4096)
    assert sum(a.loss_mask) == sum(b.loss_mask)
    assert decoded_loss_text(tokenizer, a) == decoded_loss_text(tokenizer, b)


def test_loss_falls_on_a_tiny_set_and_micro_batching_gives_the_same_step(make_policy, tokenizer):
    convos = [
        [{"role": "user", "content": f"{s} the csv"}, {"role": "assistant", "content": f"{s} submits submission.csv."}]
        for s in ["the model", "the agent", "our baseline", "the grader"]
    ]
    examples = tokenize_examples(tokenizer, convos, 256)
    policy = make_policy(lora=False)
    opt = make_optimizer(policy, 1e-3)
    before = eval_loss(policy, examples)["loss"]
    for _ in range(8):
        stats = sft_step(policy, opt, examples, lr=3e-3, micro_batch_size=2)
    after = eval_loss(policy, examples)["loss"]
    assert stats["loss_tokens"] > 0 and stats["sequences"] == 4
    assert after < before * 0.7, (before, after)

    # One micro-batch of 4 or four of 1: the same weights after one step.
    p1, p2 = make_policy(lora=False, seed=3), make_policy(lora=False, seed=3)
    sft_step(p1, make_optimizer(p1, 1e-3), examples, lr=1e-3, micro_batch_size=4)
    sft_step(p2, make_optimizer(p2, 1e-3), examples, lr=1e-3, micro_batch_size=1)
    for (n, a), (_, b) in zip(p1.model.named_parameters(), p2.model.named_parameters()):
        assert torch.allclose(a, b, atol=1e-6), n


def test_sft_and_eval_loss_over_http(served):
    worker, http = served
    body = {"examples": [{"messages": CONVO}], "max_length": 4096}
    before = http.post("/eval_loss", json=body).json()
    assert before["sequences"] == 1 and before["truncated"] == 0 and before["loss"] > 0
    for _ in range(5):
        r = http.post("/sft", json={**body, "lr": 1e-2})
        assert r.status_code == 200, r.text
    assert r.json()["step"] == 5 == worker.step
    after = http.post("/eval_loss", json=body).json()
    assert after["loss"] < before["loss"]
    cut = http.post("/eval_loss", json={**body, "max_length": 12}).json()
    assert cut["truncated"] == 1 and cut["truncated_tokens"] > 0
    bad = http.post("/sft", json={"examples": [{"messages": CONVO}, {"messages": CONVO[:2]}], "lr": 1e-3})
    assert bad.status_code == 422 and bad.json()["loc"] == "examples.1"
    assert "no assistant message" in bad.json()["error"]
    role = http.post("/eval_loss", json={"examples": [{"messages": [{"role": "tool", "content": "x"}]}]})
    assert role.status_code == 422 and role.json()["loc"].startswith("examples.0.messages.0.role")
