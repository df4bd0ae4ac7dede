"""A full fine-tuning worker makes its optimiser (and MasterAdamW's fp32 masters) at the first step: one that only
samples or scores holds the bf16 weights alone."""

import gc

import torch

from conftest import conversation
from mlepipe_worker.optim import MasterAdamW
from mlepipe_worker.protocol import ChatRequest
from mlepipe_worker.state import Worker
from mlepipe_worker.update import Sequence, UpdateConfig, update_step


def fp32_bytes() -> int:
    """Bytes of every live fp32 tensor in this process (parameters, masters, moments, buffers)."""
    gc.collect()
    seen, total = set(), 0
    for obj in gc.get_objects():
        try:
            if isinstance(obj, torch.Tensor) and obj.dtype == torch.float32 and not obj.is_meta:
                key = obj.untyped_storage().data_ptr()
                if key not in seen:
                    seen.add(key)
                    total += obj.untyped_storage().nbytes()
        except Exception:  # a tensor subclass or a freed storage: not ours to count
            continue
    return total


def chat(worker: Worker) -> None:
    worker.chat(ChatRequest(messages=[{"role": "user", "content": "the agent reads the csv"}], max_tokens=3, seed=1))


def step(worker: Worker, tokenizer) -> None:
    ids, mask = conversation(tokenizer)
    update_step(worker.policy, worker.optimizer(), [Sequence(ids, mask, advantages=1.0)], UpdateConfig(lr=1e-6))


def test_a_sampling_worker_holds_no_fp32_masters_and_the_first_step_makes_them(make_policy, tokenizer, tmp_path):
    base = fp32_bytes()
    worker = Worker(make_policy(lora=False, dtype=torch.bfloat16), model_id="tiny", ckpt_dir=tmp_path)
    master_bytes = 4 * sum(p.numel() for p in worker.policy.trainable_parameters())
    chat(worker)
    # Buffers (rotary frequencies) are fp32; a master copy would add every parameter's 4 bytes.
    assert fp32_bytes() - base < 0.1 * master_bytes, (fp32_bytes() - base, master_bytes)
    assert not worker.has_optimizer
    step(worker, tokenizer)
    assert isinstance(worker.optimizer(), MasterAdamW)
    # Masters (4 bytes) and AdamW's two moments (8 bytes) per parameter.
    assert fp32_bytes() - base >= 2.9 * master_bytes


def test_a_checkpoint_loaded_for_sampling_defers_its_optimizer_state_to_the_first_step(
    make_policy, tokenizer, tmp_path
):
    trained = Worker(make_policy(lora=False, dtype=torch.bfloat16), model_id="tiny", ckpt_dir=tmp_path)
    step(trained, tokenizer)
    trained.save(type("Req", (), {"tag": "step-00001", "step": 1})())
    masters = [m.clone() for m in trained.optimizer().param_groups[0]["params"]]

    other = Worker(make_policy(lora=False, dtype=torch.bfloat16, seed=3), model_id="tiny", ckpt_dir=tmp_path / "other")
    other.restore(tmp_path / "step-00001")
    chat(other)
    assert not other.has_optimizer
    # Saved again before any step: the loaded optimiser state is carried over unchanged.
    other.save(type("Req", (), {"tag": "step-00001b", "step": 1})())
    assert (tmp_path / "other" / "step-00001b" / "optimizer.pt").is_file()
    # The first step starts from the checkpoint's masters and moments, not from fresh ones.
    opt = other.optimizer()
    assert opt.state_dict()["state"][0]["step"] == 1
    for m, n in zip(masters, opt.param_groups[0]["params"]):
        assert torch.equal(m, n)
