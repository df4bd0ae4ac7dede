"""The loss on hand-built tensors: each aggregation mode, clip-higher and the KL estimators against values worked
out by hand."""

import math

import pytest
import torch

from mlepipe_worker.loss import LossConfig, agg_loss, kl_estimate, policy_loss

# Two sequences of 4 positions; position 0 is context. Sequence 1 has three loss tokens with ratios 1.1, 1.5 and
# 0.5 and advantage +1; sequence 2 has one loss token with ratio 0.5 and advantage −2, then two observation tokens
# whose (absurd) ratios must not count. Clip range [0.8, 1.28]:
#   seq 1: max(−1.1, −1.1) = −1.1; max(−1.5, −1.28) = −1.28 (clipped); max(−0.5, −0.8) = −0.5
#   seq 2: max(2·0.5, 2·0.8) = 1.6 (clipped)
RATIOS = [[9.0, 1.1, 1.5, 0.5], [9.0, 0.5, 30.0, 0.01]]
MASK = [[0, 1, 1, 1], [0, 1, 0, 0]]
ADV = [[1.0, 1.0, 1.0, 1.0], [-2.0, -2.0, -2.0, -2.0]]
EXPECTED = {
    # (−1.1 − 1.28 − 0.5 + 1.6) / 4
    "token-mean": -0.32,
    # ((−2.88 / 3) + 1.6 / 1) / 2
    "seq-mean-token-mean": 0.32,
    # ((−2.88 / 4) + (1.6 / 4)) / 2, L = the padded length 4
    "seq-mean-token-sum-norm": -0.16,
}


def tensors():
    old = torch.log(torch.full((2, 4), 0.1))
    logp = (old + torch.log(torch.tensor(RATIOS))).requires_grad_(True)
    return logp, old, torch.tensor(ADV), torch.tensor(MASK, dtype=torch.float32)


@pytest.mark.parametrize("mode", list(EXPECTED))
def test_each_loss_agg_mode_matches_the_hand_computed_value(mode):
    logp, old, adv, mask = tensors()
    loss, metrics = policy_loss(logp, old, adv, mask, LossConfig(clip_low=0.2, clip_high=0.28, loss_agg_mode=mode))
    assert loss.item() == pytest.approx(EXPECTED[mode], abs=1e-6)
    # Clipped: seq 1's ratio 1.5 and seq 2's ratio 0.5, 2 of 4 loss tokens.
    assert metrics["clip_frac"] == pytest.approx(0.5)


def test_seq_mean_token_sum_norm_takes_a_constant_length():
    loss_mat = torch.tensor([[5.0, 1.0, 2.0, 3.0], [5.0, 4.0, 9.0, 9.0]])
    mask = torch.tensor(MASK)
    # ((1 + 2 + 3) / 10 + 4 / 10) / 2
    assert agg_loss(loss_mat, mask, "seq-mean-token-sum-norm", norm_length=10).item() == pytest.approx(0.5)
    # A sequence with no loss token is not counted among the sequences.
    empty = torch.cat([mask, torch.zeros(1, 4)])
    rows = torch.cat([loss_mat, torch.ones(1, 4)])
    assert agg_loss(rows, empty, "seq-mean-token-mean").item() == pytest.approx((2.0 + 4.0) / 2)


def test_ratio_above_one_plus_eps_high_with_positive_advantage_sends_no_gradient():
    old = torch.zeros(1, 3)
    mask = torch.tensor([[0.0, 1.0, 1.0]])
    adv = torch.ones(1, 3)
    # Token 1: ratio 1.25, inside [0.8, 1.28] with clip-higher; token 2: ratio 1.35, beyond 1 + ε_high.
    logp = torch.log(torch.tensor([[1.0, 1.25, 1.35]])).requires_grad_(True)
    loss, _ = policy_loss(logp, old, adv, mask, LossConfig(clip_low=0.2, clip_high=0.28))
    loss.backward()
    assert logp.grad[0, 2].item() == 0.0
    # d(−A·r/N)/d log π = −r/N with N = 2 loss tokens.
    assert logp.grad[0, 1].item() == pytest.approx(-1.25 / 2)
    # Symmetric clipping (ε_high = ε_low = 0.2) would have clipped token 1 too.
    logp.grad = None
    loss, _ = policy_loss(logp, old, adv, mask, LossConfig(clip_low=0.2, clip_high=0.2))
    loss.backward()
    assert logp.grad[0, 1].item() == 0.0


def test_kl_estimators_and_the_kl_term():
    logp = torch.log(torch.tensor([[0.5, 0.5, 0.5]]))
    ref = torch.log(torch.tensor([[0.25, 0.25, 0.25]]))
    assert kl_estimate(logp, ref, "k1")[0, 1].item() == pytest.approx(math.log(2))
    # r = π_ref / π = 0.5: r − log r − 1
    k3 = 0.5 + math.log(2) - 1
    assert kl_estimate(logp, ref, "k3")[0, 1].item() == pytest.approx(k3)
    mask = torch.tensor([[0.0, 1.0, 1.0]])
    cfg = LossConfig(kl_coef=0.1, kl_estimator="k3")
    loss, metrics = policy_loss(logp, logp, torch.zeros(1, 3), mask, cfg, ref_logp=ref)
    assert metrics["kl"] == pytest.approx(k3)
    assert loss.item() == pytest.approx(0.1 * k3)


def test_bad_settings_are_refused_with_their_name():
    with pytest.raises(ValueError, match="loss_agg_mode"):
        LossConfig(loss_agg_mode="seq-mean")
    with pytest.raises(ValueError, match="kl_estimator"):
        LossConfig(kl_estimator="k2")
