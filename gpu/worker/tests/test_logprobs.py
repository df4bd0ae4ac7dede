"""Log-probabilities by chunks of the output head: the same values, entropies and gradients as the full logits,
for a LoRA model (adapters on and off) and a fully fine-tuned one, across chunk boundaries and padding."""

import pytest
import torch

import mlepipe_worker.logprobs as lp_mod
from conftest import conversation, jitter_adapters
from mlepipe_worker.logprobs import logprobs_from_logits, token_logprobs
from mlepipe_worker.update import collate


def batch(tokenizer):
    a, _ = conversation(tokenizer)
    b, _ = conversation(tokenizer, reply1="a random forest trains on twelve features.", obs="rmse: 1.25")
    seqs = [
        type(
            "S",
            (),
            {"input_ids": x, "loss_mask": [0] * len(x), "advantages": 0.0, "old_logprobs": None, "ref_logprobs": None},
        )()
        for x in (a, b)
    ]
    out = collate(seqs, tokenizer.pad_token_id, torch.device("cpu"))
    return out["input_ids"], out["attention_mask"]


def full(model, ids, attention, temperature, entropy=False):
    logits = model(input_ids=ids, attention_mask=attention, use_cache=False).logits
    return logprobs_from_logits(logits, ids, temperature, entropy)


@pytest.mark.parametrize("lora", [True, False])
def test_chunked_log_probs_equal_the_full_logits_and_so_do_their_gradients(make_policy, tokenizer, monkeypatch, lora):
    policy = make_policy(lora=lora)
    if lora:
        jitter_adapters(policy)
    ids, attention = batch(tokenizer)
    # Chunks of 7 positions: the sequences cross many chunk boundaries, the last one partial.
    monkeypatch.setattr(lp_mod, "LOGIT_CHUNK", 7)
    assert (ids.shape[1] - 1) % 7
    params = policy.trainable_parameters()
    grads = []
    for how in (full, token_logprobs):
        policy.model.zero_grad(set_to_none=True)
        logp, ent = how(policy.model, ids, attention, 0.7, entropy=True)
        (logp * attention).sum().backward()
        grads.append([p.grad.clone() for p in params])
        if how is full:
            want, want_ent = logp.detach(), ent
    assert torch.allclose(logp.detach(), want, atol=1e-5)
    assert torch.allclose(ent, want_ent, atol=1e-5)
    assert ent.requires_grad is False
    for g1, g2 in zip(*grads):
        assert torch.allclose(g1, g2, atol=1e-5, rtol=1e-4)
    if lora:
        # The reference (adapters off) differs from the policy, and chunking keeps it exact too.
        with torch.no_grad(), policy.reference_model() as ref:
            r_full, _ = full(ref, ids, attention, 1.0)
            r, _ = token_logprobs(ref, ids, attention, 1.0)
        assert torch.allclose(r, r_full, atol=1e-5) and not torch.allclose(r, want, atol=1e-3)


def test_a_chunk_holds_only_its_own_positions_logits(make_policy, tokenizer, monkeypatch):
    policy = make_policy(lora=True)
    ids, attention = batch(tokenizer)
    monkeypatch.setattr(lp_mod, "LOGIT_CHUNK", 4)
    widths = []
    real = lp_mod._chunk

    def spy(head, hidden, targets, temperature, entropy):
        widths.append(hidden.shape[1])
        return real(head, hidden, targets, temperature, entropy)

    monkeypatch.setattr(lp_mod, "_chunk", spy)
    logp, _ = token_logprobs(policy.model, ids, attention)
    logp.sum().backward()
    # Never more than a chunk's positions through the head at once, in the forward pass and in its recomputation.
    assert max(widths) == 4 and sum(widths) == 2 * (ids.shape[1] - 1)
