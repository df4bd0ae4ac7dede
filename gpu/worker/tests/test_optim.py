"""Updates that land on bf16 weights: the share of the intended change that a model held in bf16 realises at the
paper's learning rate, against the same AdamW run in fp32 from the same start."""

import torch

from conftest import conversation
from mlepipe_worker import checkpoint
from mlepipe_worker.optim import MasterAdamW, realised_share
from mlepipe_worker.update import Sequence, UpdateConfig, make_optimizer, update_step

STEPS = 100
LR = 1e-6


def test_a_bf16_model_realises_the_intended_change_at_lr_1e_6(make_policy):
    policy = make_policy(lora=False, dtype=torch.bfloat16)
    assert {p.dtype for p in policy.trainable_parameters()} == {torch.bfloat16}
    share = realised_share(policy.trainable_parameters(), lambda ps: make_optimizer(policy, LR), steps=STEPS, lr=LR)
    # Rounding the fp32 masters to bf16 at the end is unbiased: the share is 1 up to that noise. In place, it is ~0.02.
    assert 0.9 < share < 1.1, share
    assert isinstance(make_optimizer(policy, LR), MasterAdamW)


def test_bf16_in_place_loses_the_update_which_is_why_masters_exist(make_policy):
    policy = make_policy(lora=False, dtype=torch.bfloat16)
    params = policy.trainable_parameters()
    start = [p.detach().clone() for p in params]
    opt = torch.optim.AdamW(params, lr=LR)
    for _ in range(10):
        for p in params:
            p.grad = torch.ones_like(p)
        opt.step()
    moved = sum(int((p.detach() != s).sum()) for p, s in zip(params, start))
    total = sum(p.numel() for p in params)
    assert moved / total < 0.1, moved / total


def test_lora_trains_an_fp32_adapter_over_a_bf16_base(make_policy):
    policy = make_policy(lora=True, dtype=torch.bfloat16)
    trainable = {n: p.dtype for n, p in policy.model.named_parameters() if p.requires_grad}
    frozen = {p.dtype for p in policy.model.parameters() if not p.requires_grad}
    assert trainable and all("lora_" in n for n in trainable)
    assert set(trainable.values()) == {torch.float32}
    assert frozen == {torch.bfloat16}
    # fp32 adapters need no master copies.
    assert type(make_optimizer(policy, LR)) is torch.optim.AdamW


def test_masters_resume_from_a_checkpoint_with_the_residual_bf16_cannot_hold(make_policy, tokenizer, tmp_path):
    policy = make_policy(lora=False, dtype=torch.bfloat16)
    opt = make_optimizer(policy, LR)
    ids, mask = conversation(tokenizer)
    update_step(policy, opt, [Sequence(ids, mask, advantages=1.0)], UpdateConfig(lr=LR))
    masters = [m.clone() for m in opt.param_groups[0]["params"]]
    # The residual: masters differ from what the bf16 weights hold.
    assert any(not torch.equal(m, p.detach().float()) for m, p in zip(masters, policy.trainable_parameters()))
    path = checkpoint.write_checkpoint(tmp_path, "step-1", policy, opt, {"step": 1})
    again = make_optimizer(policy, LR)
    assert checkpoint.load_optimizer_state(again, path, torch.device("cpu"))
    for m, n in zip(masters, again.param_groups[0]["params"]):
        assert torch.equal(m, n)
    assert again.state_dict()["state"][0]["step"] == 1
