"""Sampling without a per-step record of the logits: the replies and log-probabilities equal transformers'
generate (the worker's sampler before, which kept every step's [B, V] logits and stacked a second copy), no
[steps, B, V] tensor is ever made, and a group of rows samples the same tokens alone or batched beside others."""

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from transformers import GenerationConfig

from conftest import encode
from mlepipe_worker.generate import Group, generate, generate_groups

PROMPTS = ["the agent reads the public csv", "the grader scores", "import pandas as pd"]


def hf_reference(policy, prompts, *, max_new_tokens, temperature, top_p, seed, stop_strings=None):
    """transformers' generate with its per-step logits, then each sampled token's log-probability from them."""
    tok = policy.tokenizer
    pad, eos = tok.pad_token_id, tok.eos_token_id
    width = max(len(p) for p in prompts)
    ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
    attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
    sampling = temperature > 0
    gen = GenerationConfig(max_new_tokens=max_new_tokens, do_sample=sampling, temperature=temperature if sampling else None,
                           top_p=top_p if sampling else None, top_k=0 if sampling else None, eos_token_id=[eos], pad_token_id=pad,
                           return_dict_in_generate=True, output_logits=True, stop_strings=stop_strings)  # fmt: skip
    torch.manual_seed(seed)
    policy.model.eval()
    out = policy.model.generate(
        input_ids=ids, attention_mask=attention, generation_config=gen, **({"tokenizer": tok} if stop_strings else {})
    )
    steps = torch.stack(out.logits, dim=1).float() / (temperature if sampling else 1.0)
    new = out.sequences[:, width:]
    logp = (steps.gather(-1, new[:, : steps.shape[1]].unsqueeze(-1)).squeeze(-1) - torch.logsumexp(steps, -1)).tolist()
    return new.tolist(), logp


def check_equal(samples, ref_ids, ref_logp):
    for s, ids, lp in zip(samples, ref_ids, ref_logp):
        n = len(s.token_ids)
        assert s.token_ids == ids[:n]
        assert all(t == ids[n - 1] for t in ids[n:]) or s.finish_reason == "stop"
        assert torch.allclose(torch.tensor(s.logprobs), torch.tensor(lp[:n]), atol=1e-5)


def test_replies_and_logprobs_equal_transformers_generate(make_policy, tokenizer):
    policy = make_policy()
    prompts = [encode(tokenizer, p) for p in PROMPTS]
    for temperature, top_p, seed in [(1.0, 1.0, 0), (0.7, 0.9, 5), (0.0, 1.0, 0)]:
        samples = generate(policy, prompts, max_new_tokens=12, temperature=temperature, top_p=top_p, seed=seed)
        ids, logp = hf_reference(policy, prompts, max_new_tokens=12, temperature=temperature, top_p=top_p, seed=seed)
        assert [s.token_ids for s in samples] == [row[: len(s.token_ids)] for s, row in zip(samples, ids)]
        check_equal(samples, ids, logp)


class Shapes(TorchDispatchMode):
    """Records the shape of every tensor an operation returns."""

    def __init__(self):
        super().__init__()
        self.shapes: list[tuple[int, ...]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(t, torch.Tensor):
                self.shapes.append(tuple(t.shape))
        return out


def test_no_tensor_holds_logits_for_more_than_one_step(make_policy, tokenizer):
    policy = make_policy()
    vocab = policy.model.get_input_embeddings().num_embeddings
    prompts = [encode(tokenizer, p) for p in PROMPTS]
    steps = 24
    with Shapes() as seen:
        (first, *_) = generate(policy, prompts, max_new_tokens=steps, temperature=1.0, ignore_stop=True, seed=0)
    assert len(first.token_ids) == steps
    logit_sized = [s for s in seen.shapes if len(s) >= 2 and s[-1] == vocab]
    assert (len(prompts), vocab) in logit_sized, "the sampler's logits were not seen"
    # [B, k, V] with k > 1 is logits of several positions: the old sampler stacked [B, steps, V]. (The output head's
    # weight seen through a batched product, [B, hidden, V], is a view of the parameter, not logits.)
    hidden = policy.model.config.hidden_size
    assert steps != hidden
    several = [s for s in logit_sized if len(s) == 3 and s[1] > 1 and s[1] != hidden]
    assert several == [], several


def test_a_group_samples_the_same_alone_or_batched(make_policy, tokenizer):
    policy = make_policy()
    a = Group([encode(tokenizer, PROMPTS[0])] * 2, max_new_tokens=10, temperature=1.0, seed=7)
    b = Group(
        [encode(tokenizer, "accuracy: 0.81 rmse: 1.25 and then a much longer prompt than the others")],
        max_new_tokens=4,
        temperature=0.8,
        top_p=0.9,
        seed=3,
    )
    c = Group([encode(tokenizer, PROMPTS[1])], max_new_tokens=6, temperature=0.0)
    done = []
    batched = generate_groups(policy, [a, b, c], on_done=lambda i, s: done.append(i))
    for g, together in zip([a, b, c], batched):
        (alone,) = generate_groups(policy, [g])
        assert [s.token_ids for s in together] == [s.token_ids for s in alone]
        assert [s.finish_reason for s in together] == [s.finish_reason for s in alone]
        for x, y in zip(together, alone):
            assert torch.allclose(torch.tensor(x.logprobs), torch.tensor(y.logprobs), atol=1e-5)
    # Each group's own limit: b's 4 tokens end it first, and it is reported before the batch ends.
    assert all(len(s.token_ids) <= 4 for s in batched[1]) and done[0] in (1, 2) and sorted(done) == [0, 1, 2]


def test_a_cancelled_group_ends_at_once_and_the_others_go_on(make_policy, tokenizer):
    policy = make_policy()
    asked = []
    gone = Group(
        [encode(tokenizer, PROMPTS[0])],
        max_new_tokens=16,
        temperature=1.0,
        seed=1,
        cancelled=lambda: asked.append(1) or True,
    )
    kept = Group([encode(tokenizer, PROMPTS[1])], max_new_tokens=16, temperature=1.0, seed=1)
    out = generate_groups(policy, [gone, kept], ignore_stop=True)
    assert len(out[0][0].token_ids) == 1 and out[0][0].finish_reason == "length"
    assert len(out[1][0].token_ids) == 16 and len(asked) == 1
