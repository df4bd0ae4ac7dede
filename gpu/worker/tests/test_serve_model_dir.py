"""`serve --model DIR`: a Hugging Face checkpoint directory (full fine-tuning with a KL reference here) and a
worker checkpoint, built the way the command builds them; updates, saves and restores without HTTP."""

import pytest
import torch
from serving import batch, identity, trajectory

from mlepipe_worker.__main__ import build, parse
from mlepipe_worker.batch import BatchError
from mlepipe_worker.generate import chat_prompt_ids
from mlepipe_worker.protocol import Batch, SaveRequest, ScoreRequest

MESSAGES = [{"role": "user", "content": "the grader scores submission.csv"}]


@pytest.fixture
def hf_dir(make_policy, tokenizer, tmp_path):
    d = tmp_path / "tiny-hf"
    make_policy(lora=False, seed=3).model.save_pretrained(d)
    tokenizer.save_pretrained(d)
    return d


def one_turn(worker, reply: list[int], kl: float) -> Batch:
    prompt = chat_prompt_ids(worker.policy, MESSAGES)
    old = worker.score(ScoreRequest(items=[{"prompt_ids": prompt, "token_ids": reply}]))["results"][0]["logprobs"]
    body = batch(
        [trajectory(0, 1.0, [{"prompt_ids": prompt, "token_ids": reply, "logprobs": old}])],
        identity(worker.policy.tokenizer),
        lr=1e-2,
    )
    body["hyper"]["kl"] = kl
    return Batch.model_validate(body)


def scores(worker, reply):
    prompt = chat_prompt_ids(worker.policy, MESSAGES)
    return worker.score(ScoreRequest(items=[{"prompt_ids": prompt, "token_ids": reply}]))["results"][0]["logprobs"]


def test_full_fine_tuning_from_a_model_dir_with_a_reference_saves_and_restores(hf_dir, tokenizer, tmp_path):
    worker = build(
        parse(
            [
                "serve",
                "--model",
                str(hf_dir),
                "--lora-rank",
                "0",
                "--reference",
                "--device",
                "cpu",
                "--ckpt-dir",
                str(tmp_path / "ck"),
            ]
        )
    )
    assert worker.policy.lora is None and worker.policy.reference is not None
    assert worker.identity() == identity(tokenizer)
    reply = list(tokenizer("the model reads the csv.<|im_end|>", add_special_tokens=False)["input_ids"])

    first = worker.update(one_turn(worker, reply, kl=0.1))
    assert first["step"] == 1 and first["kl"] == pytest.approx(0.0, abs=1e-6)
    second = worker.update(one_turn(worker, reply, kl=0.1))
    # After one step the policy has left its reference.
    assert second["kl"] > 0

    saved = worker.save(SaveRequest(tag="full"))
    at_save = scores(worker, reply)
    worker.update(one_turn(worker, reply, kl=0.1))
    assert scores(worker, reply) != pytest.approx(at_save, abs=1e-6)
    reference = worker.policy.reference
    worker.restore(tmp_path / "ck" / "full")
    assert worker.step == saved["step"] == 2
    assert scores(worker, reply) == pytest.approx(at_save, abs=1e-6)
    assert worker.policy.reference is reference, "the KL reference stays the starting policy"

    # A worker checkpoint is itself a --model directory.
    again = build(parse(["serve", "--model", saved["path"], "--device", "cpu", "--ckpt-dir", str(tmp_path / "ck2")]))
    assert again.policy.lora is None
    assert scores(again, reply) == pytest.approx(at_save, abs=1e-6)


def test_a_kl_term_without_a_reference_is_refused(hf_dir, tokenizer, tmp_path):
    worker = build(
        parse(["serve", "--model", str(hf_dir), "--lora-rank", "0", "--device", "cpu", "--ckpt-dir", str(tmp_path)])
    )
    reply = list(tokenizer("scores.", add_special_tokens=False)["input_ids"])
    before = {n: p.detach().clone() for n, p in worker.policy.model.named_parameters()}
    with pytest.raises(BatchError) as err:
        worker.update(one_turn(worker, reply, kl=0.1))
    assert err.value.loc == "hyper.kl" and "--reference" in err.value.message
    assert all(torch.equal(before[n], p) for n, p in worker.policy.model.named_parameters()) and worker.step == 0


def test_a_lora_rank_over_a_full_checkpoint_trains_a_new_adapter_on_its_weights(hf_dir, tokenizer, tmp_path):
    full = build(
        parse(
            ["serve", "--model", str(hf_dir), "--lora-rank", "0", "--device", "cpu", "--ckpt-dir", str(tmp_path / "ck")]
        )
    )
    reply = list(tokenizer("the model reads the csv.<|im_end|>", add_special_tokens=False)["input_ids"])
    full.update(one_turn(full, reply, kl=0))
    saved = full.save(SaveRequest(tag="sft"))["path"]
    at_save = scores(full, reply)

    # A full SFT checkpoint, then LoRA on it (as a checkpoint: entry with lora_rank > 0 asks): the adapter is new and zero.
    lora = build(
        parse(["serve", "--model", saved, "--lora-rank", "8", "--device", "cpu", "--ckpt-dir", str(tmp_path / "ck2")])
    )
    assert lora.policy.lora is not None and lora.policy.lora.rank == 8
    assert scores(lora, reply) == pytest.approx(at_save, abs=1e-5)
    frozen = {n: p.detach().clone() for n, p in lora.policy.model.named_parameters() if not p.requires_grad}
    assert frozen and all("lora_" not in n for n in frozen)
    lora.update(one_turn(lora, reply, kl=0))
    assert all(torch.equal(frozen[n], p) for n, p in lora.policy.model.named_parameters() if n in frozen), (
        "only the adapter trains"
    )
    assert scores(lora, reply) != pytest.approx(at_save, abs=1e-6)


def test_the_memory_check_counts_the_adapter_asked_for_over_a_full_checkpoint(hf_dir, tokenizer, tmp_path):
    full = build(
        parse(
            ["serve", "--model", str(hf_dir), "--lora-rank", "0", "--device", "cpu", "--ckpt-dir", str(tmp_path / "ck")]
        )
    )
    saved = full.save(SaveRequest(tag="sft"))["path"]
    for rank, plan in [("0", "full fine-tuning of"), ("8", "LoRA training of")]:
        with pytest.raises(SystemExit) as err:
            build(
                parse(
                    [
                        "serve",
                        "--model",
                        saved,
                        "--lora-rank",
                        rank,
                        "--device",
                        "cpu",
                        "--check-memory",
                        "--device-memory-gib",
                        "0.00001",
                    ]
                )
            )
        assert plan in str(err.value.code), err.value.code
