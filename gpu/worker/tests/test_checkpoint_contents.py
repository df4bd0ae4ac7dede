"""What a worker checkpoint holds: for LoRA the adapter alone (the base is named, not copied) and an optimiser state
over the adapter's parameters; for full fine-tuning every weight."""

import torch
from safetensors import safe_open

from conftest import conversation
from mlepipe_worker import checkpoint
from mlepipe_worker.update import Sequence, UpdateConfig, make_optimizer, update_step


def tensors(folder):
    out = {}
    for f in folder.rglob("*.safetensors"):
        with safe_open(str(f), "pt") as st:
            out.update({k: st.get_tensor(k).numel() for k in st.keys()})
    return out


def test_a_lora_checkpoint_saves_only_the_adapter(make_policy, tokenizer, tmp_path):
    policy = make_policy(lora=True)
    opt = make_optimizer(policy, 1e-3)
    ids, mask = conversation(tokenizer)
    update_step(policy, opt, [Sequence(ids, mask, advantages=1.0)], UpdateConfig(lr=1e-3))
    path = checkpoint.write_checkpoint(tmp_path, "step-00001", policy, opt, {"step": 1})
    saved = tensors(path)
    trainable = sum(p.numel() for p in policy.trainable_parameters())
    total = sum(p.numel() for p in policy.model.parameters())
    assert not (path / "model").exists()
    assert saved and all("lora_" in k for k in saved), sorted(saved)[:3]
    assert sum(saved.values()) == trainable < total / 4
    state = torch.load(path / checkpoint.OPTIMIZER, weights_only=True)["state"]
    assert sum(s["exp_avg"].numel() for s in state.values()) == trainable


def test_a_full_checkpoint_saves_every_weight(make_policy, tmp_path):
    policy = make_policy(lora=False)
    path = checkpoint.write_checkpoint(tmp_path, "step-00001", policy, make_optimizer(policy, 1e-3), {"step": 1})
    # Tied embeddings may be stored once: at least every parameter tensor's worth but the tied copy.
    assert (
        sum(tensors(path).values())
        >= sum(p.numel() for p in policy.model.parameters()) - policy.model.get_input_embeddings().weight.numel()
    )
