"""`tiny OUT`: a model folder that `serve --model` loads, with the context asked for and a tokenizer trained
on the corpus given (conversations in JSONL or plain text); bad corpora fail with their position."""

import json

import pytest

from mlepipe_worker.__main__ import build, main, parse
from mlepipe_worker.generate import chat_prompt_ids
from mlepipe_worker.tiny import corpus_texts

REPLY = "Action: List Files\nAction Input: {\"dir_path\": \"public\"}"


def test_folder_serves_with_its_context_and_tokenizer(tmp_path, capsys):
    corpus = tmp_path / "demos.jsonl"
    corpus.write_text(
        "\n".join(
            json.dumps(
                {
                    "messages": [
                        {"role": "user", "content": "List the task files."},
                        {"role": "assistant", "content": REPLY},
                    ]
                }
            )
            for _ in range(3)
        )
        + "\n"
    )
    out = tmp_path / "tiny"
    main(["tiny", str(out), "--corpus", str(corpus), "--vocab", "300", "--context", "4096", "--seed", "2"])
    assert "context 4096 tokens" in capsys.readouterr().out
    worker = build(parse(["serve", "--model", str(out), "--lora-rank", "0", "--device", "cpu"]))
    policy = worker.policy
    assert policy.model.config.max_position_embeddings == 4096
    tok = policy.tokenizer
    assert tok.decode(tok(REPLY)["input_ids"]) == REPLY
    # Trained on the corpus: its reply takes fewer tokens than bytes.
    assert len(tok(REPLY)["input_ids"]) < len(REPLY.encode()) / 2
    assert chat_prompt_ids(policy, [{"role": "user", "content": "hi"}])


def test_corpus_errors(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": []}\n{oops\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:2: not JSON"):
        corpus_texts([bad])
    with pytest.raises(ValueError, match="no such file"):
        corpus_texts([tmp_path / "missing.txt"])
    plain = tmp_path / "notes.txt"
    plain.write_text("a plain text corpus")
    assert corpus_texts([plain]) == ["a plain text corpus"]
