"""One optimiser step on exact token batches through a tiny Qwen3: masks, clip-higher, micro-batching, direction."""

import pytest
import torch

from conftest import conversation, jitter_adapters
from mlepipe_worker.generate import generate
from mlepipe_worker.loss import AGG_MODES, LossConfig
from mlepipe_worker.update import (
    Sequence,
    UpdateConfig,
    accumulate_gradients,
    make_optimizer,
    score,
    turn_advantages,
    update_step,
)


def test_observation_tokens_get_exactly_zero_gradient(make_policy, tokenizer):
    policy = make_policy(lora=True)
    jitter_adapters(policy)
    ids, mask = conversation(tokenizer)
    other_ids, other_mask = conversation(
        tokenizer, reply1="the agent scores.", obs="Traceback (most recent call last):"
    )
    batch = [Sequence(ids, mask, advantages=1.0), Sequence(other_ids, other_mask, advantages=-0.5)]
    # The gradient reaching the logits: position p predicts token p + 1.
    grads = []
    lm_head = policy.model.get_base_model().lm_head

    def capture(_module, _inputs, out):
        out.register_hook(grads.append)

    handle = lm_head.register_forward_hook(capture)
    try:
        accumulate_gradients(policy, batch, UpdateConfig(micro_batch_size=2))
    finally:
        handle.remove()
    (g,) = grads
    for row, seq in enumerate(batch):
        # Position p predicts token p + 1: the head computes no logits for the last position.
        targets = torch.tensor(seq.loss_mask[1:], dtype=torch.bool)
        per_position = g[row, : len(seq.input_ids) - 1].abs().sum(-1)
        assert torch.all(per_position[~targets] == 0), "a prompt or observation token received gradient"
        assert torch.all(per_position[targets] > 0)
        # Padding (the shorter sequence's tail) gets none either.
        assert torch.all(g[row, len(seq.input_ids) - 1 :] == 0)


def test_a_ratio_beyond_one_plus_eps_high_with_positive_advantage_contributes_no_gradient(make_policy, tokenizer):
    policy = make_policy(lora=True)
    jitter_adapters(policy)
    ids, mask = conversation(tokenizer)
    (now,) = score(policy, [Sequence(ids, mask, 1.0)])
    cfg = UpdateConfig(loss=LossConfig(clip_low=0.2, clip_high=0.28))

    def grad_norm(ratio: float) -> float:
        # The sampler gave each reply token probability π/ratio, so π_θ/π_old = ratio.
        old = [lp - torch.log(torch.tensor(ratio)).item() for lp in now]
        for p in policy.trainable_parameters():
            p.grad = None
        accumulate_gradients(policy, [Sequence(ids, mask, advantages=1.0, old_logprobs=old)], cfg)
        return sum(float(p.grad.abs().sum()) for p in policy.trainable_parameters() if p.grad is not None)

    assert grad_norm(1.5) == 0.0
    assert grad_norm(1.25) > 0.0  # inside [1 − ε_low, 1 + ε_high]: it trains


@pytest.mark.parametrize("mode", AGG_MODES)
def test_micro_batches_give_the_whole_batch_gradient(make_policy, tokenizer, mode):
    policy = make_policy(lora=True)
    jitter_adapters(policy)
    a, am = conversation(tokenizer)
    b, bm = conversation(
        tokenizer, reply1="a random forest predicts twelve features.", obs="rmse: 1.25", reply2="the grader"
    )
    c, cm = conversation(tokenizer, reply1="ok", obs="", reply2="our baseline scores the validation split.")
    seqs = [
        Sequence(a, am, advantages=turn_advantages(am, [0.7, -0.2])),
        Sequence(b, bm, advantages=-1.0),
        Sequence(c, cm, advantages=0.4),
    ]
    # Off-policy by a little, so that some tokens are clipped and the ratio is not 1.
    base = score(policy, seqs)
    g = torch.Generator().manual_seed(0)
    for s, lp in zip(seqs, base):
        s.old_logprobs = [x + 0.3 * float(torch.randn(1, generator=g)) for x in lp]
    cfg = LossConfig(loss_agg_mode=mode, kl_coef=0.05, kl_estimator="k3")

    def grads(micro: int):
        for p in policy.trainable_parameters():
            p.grad = None
        stats = accumulate_gradients(policy, seqs, UpdateConfig(loss=cfg, micro_batch_size=micro))
        return stats, [p.grad.clone() for p in policy.trainable_parameters()]

    whole, g_whole = grads(3)
    assert 0 < whole["clip_frac"] < 1
    for micro in (1, 2):
        part, g_part = grads(micro)
        assert part["loss"] == pytest.approx(whole["loss"], rel=1e-5, abs=1e-7)
        assert part["clip_frac"] == pytest.approx(whole["clip_frac"])
        for x, y in zip(g_part, g_whole):
            torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("lora", [True, False])
def test_updates_raise_positive_and_lower_negative_replies(make_policy, tokenizer, lora):
    policy = make_policy(lora=lora)
    prompt = [tokenizer.convert_tokens_to_ids("<|im_start|>")] + list(
        tokenizer("user\nthe agent", add_special_tokens=False)["input_ids"]
    )
    good, bad = generate(policy, [prompt, prompt], max_new_tokens=6, temperature=1.0, seed=3)
    seqs = [
        Sequence(prompt + s.token_ids, [0] * len(prompt) + [1] * len(s.token_ids), advantages=adv)
        for s, adv in ((good, 1.0), (bad, -1.0))
    ]

    def reply_logprob() -> list[float]:
        return [sum(lp for lp, m in zip(row, s.loss_mask) if m) for row, s in zip(score(policy, seqs), seqs)]

    before = reply_logprob()
    optimizer = make_optimizer(policy)
    for _ in range(3):
        # On-policy each step: the sampler's log-probabilities are the current ones.
        for s, lp in zip(seqs, score(policy, seqs)):
            s.old_logprobs = lp
        stats = update_step(policy, optimizer, seqs, UpdateConfig(lr=1e-2 if lora else 3e-3, micro_batch_size=1))
        assert stats["grad_norm"] > 0 and stats["tokens_per_s"] > 0
    after = reply_logprob()
    assert after[0] > before[0], "the positive-advantage reply did not become more likely"
    assert after[1] < before[1], "the negative-advantage reply did not become less likely"


def test_turn_advantages_broadcast_to_each_reply(tokenizer):
    _, mask = conversation(tokenizer)
    adv = turn_advantages(mask, [0.5, -1.0])
    assert {a for a, m in zip(adv, mask) if not m} == {0.0}
    first_end = mask.index(0, mask.index(1))
    assert set(adv[mask.index(1) : first_end]) == {0.5}
    assert set(adv[first_end:]) - {0.0} == {-1.0}
    with pytest.raises(ValueError, match="more assistant turns than the 1 turn advantages"):
        turn_advantages(mask, [1.0])
    with pytest.raises(ValueError, match="3 turn advantages for 2 assistant turns"):
        turn_advantages(mask, [1.0, 2.0, 3.0])


def test_malformed_sequences_are_refused(make_policy):
    policy = make_policy()
    with pytest.raises(ValueError, match="first token"):
        accumulate_gradients(policy, [Sequence([1, 2, 3], [1, 1, 1], 1.0)], UpdateConfig())
    with pytest.raises(ValueError, match="old_logprobs has 2 entries for 3 tokens"):
        accumulate_gradients(policy, [Sequence([1, 2, 3], [0, 1, 1], 1.0, old_logprobs=[0.0, 0.0])], UpdateConfig())


@pytest.mark.parametrize("lora", [True, False])
def test_kl_to_the_frozen_reference_is_zero_until_the_policy_moves(make_policy, tokenizer, lora):
    # LoRA: the base with the adapters off; full fine-tuning: a frozen copy.
    policy = make_policy(lora=lora, reference=True)
    ids, mask = conversation(tokenizer)
    cfg = UpdateConfig(loss=LossConfig(kl_coef=0.1, kl_estimator="k3"), lr=1e-2)
    optimizer = make_optimizer(policy)
    first = update_step(policy, optimizer, [Sequence(ids, mask, 1.0)], cfg)
    second = update_step(policy, optimizer, [Sequence(ids, mask, 1.0)], cfg)
    assert first["kl"] == pytest.approx(0.0, abs=1e-9)
    assert second["kl"] > 1e-6
