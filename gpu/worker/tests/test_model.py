"""The policy's model, checkpoints, tokenizer and sampler."""

import pytest
import torch

from conftest import conversation, corpus, jitter_adapters
from mlepipe_worker.generate import chat_prompt_ids, generate
from mlepipe_worker.model import load_policy, save_policy, tokenizer_identity, train_tokenizer
from mlepipe_worker.update import Sequence, UpdateConfig, make_optimizer, score, update_step


def logits(policy, ids):
    policy.model.eval()
    with torch.no_grad():
        return policy.model(input_ids=torch.tensor([ids])).logits


@pytest.mark.parametrize("lora", [True, False])
def test_save_then_load_reproduces_the_logits(make_policy, tokenizer, tmp_path, lora):
    policy = make_policy(lora=lora, seed=7)
    if lora:
        jitter_adapters(policy)
    ids, mask = conversation(tokenizer)
    # A trained step, so that the checkpoint differs from a fresh model.
    update_step(policy, make_optimizer(policy), [Sequence(ids, mask, 1.0)], UpdateConfig(lr=1e-2))
    expected = logits(policy, ids)
    save_policy(policy, tmp_path / "ckpt")
    assert (tmp_path / "ckpt" / ("adapter" if lora else "model")).is_dir()
    loaded = load_policy(tmp_path / "ckpt", device="cpu")
    assert (loaded.lora is not None) == lora
    assert tokenizer_identity(loaded.tokenizer) == tokenizer_identity(tokenizer)
    torch.testing.assert_close(logits(loaded, ids), expected, rtol=0, atol=0)
    # It trains on from there.
    assert loaded.trainable_parameters()
    assert not torch.equal(logits(make_policy(lora=lora, seed=7), ids), expected)


def test_sampled_logprobs_are_the_ones_the_trainer_computes(make_policy, tokenizer):
    policy = make_policy(lora=True)
    jitter_adapters(policy)
    prompts = [
        chat_prompt_ids(policy, [{"role": "user", "content": "the agent reads"}]),
        chat_prompt_ids(policy, [{"role": "user", "content": "a noisy label in twelve features"}]),
    ]
    assert len(prompts[0]) != len(prompts[1])  # the batch is left-padded
    for temperature in (0.7, 0.0):
        samples = generate(policy, prompts, max_new_tokens=5, temperature=temperature, top_p=0.9, seed=0)
        seqs = [
            Sequence(s.prompt_ids + s.token_ids, [0] * len(s.prompt_ids) + [1] * len(s.token_ids), 0.0) for s in samples
        ]
        trainer = score(policy, seqs, temperature=temperature or 1.0)
        for s, row in zip(samples, trainer):
            assert len(s.token_ids) == len(s.logprobs) and 1 <= len(s.token_ids) <= 5
            torch.testing.assert_close(
                torch.tensor(row[len(s.prompt_ids) :]), torch.tensor(s.logprobs), rtol=1e-4, atol=1e-5
            )


def test_generation_stops_at_the_stop_token_unless_told_not_to(make_policy, tokenizer):
    policy = make_policy(lora=False)
    prompt = chat_prompt_ids(policy, [{"role": "user", "content": "the grader"}])

    # Make <|im_end|> the model's only choice: every reply is that one token.
    def favour_eos(_module, _inputs, out):
        out = out.clone()
        out[..., tokenizer.eos_token_id] += 1e4
        return out

    policy.model.lm_head.register_forward_hook(favour_eos)
    (stopped,) = generate(policy, [prompt], max_new_tokens=4, temperature=0.0)
    assert stopped.token_ids == [tokenizer.eos_token_id] and stopped.finish_reason == "stop"
    (forced,) = generate(policy, [prompt], max_new_tokens=4, temperature=1.0, ignore_stop=True, seed=0)
    assert len(forced.token_ids) == 4 and forced.finish_reason == "length"


def test_the_tokenizer_renders_qwen2_5s_template_and_names_its_identity(tokenizer):
    # Qwen2.5's own template: ChatML, with its default system prompt when the conversation has none.
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True
    )
    assert (
        text
        == "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )
    own = tokenizer.apply_chat_template(
        [{"role": "system", "content": "Solve it."}, {"role": "user", "content": "hi"}],
        tokenize=False,
        add_generation_prompt=True,
    )
    assert own == "<|im_start|>system\nSolve it.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids) == text
    assert tokenizer_identity(tokenizer) == tokenizer_identity(train_tokenizer(corpus(), vocab_size=384))
    assert tokenizer_identity(tokenizer) != tokenizer_identity(train_tokenizer(corpus(), vocab_size=320))
