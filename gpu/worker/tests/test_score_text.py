"""/score with a reply given as text and an assistant prefix: the same numbers as the equivalent token ids, so
turn-level credit can score a tool call under contexts only the worker can render; items past max_length are
reported, not scored."""

import pytest
from conftest import encode

from mlepipe_worker.__main__ import build, parse
from mlepipe_worker.generate import chat_prompt_ids
from mlepipe_worker.protocol import ScoreRequest

MESSAGES = [{"role": "user", "content": "the agent reads the public csv."}]


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    return build(parse(["serve", "--tiny", "--device", "cpu", "--ckpt-dir", str(tmp_path_factory.mktemp("ck"))]))


def test_text_reply_and_prefix_score_as_their_token_ids(worker):
    tok = worker.policy.tokenizer
    prefix, reply = "the model reads twelve features.", " our baseline scores submission.csv"
    prompt = chat_prompt_ids(worker.policy, MESSAGES) + encode(tok, prefix)
    by_ids = worker.score(ScoreRequest(items=[{"prompt_ids": prompt, "token_ids": encode(tok, reply)}]))["results"][0]
    by_text = worker.score(ScoreRequest(items=[{"messages": MESSAGES, "prefix": prefix, "reply": reply}]))["results"][0]
    assert by_text["prompt_ids"] == prompt and by_text["token_ids"] == encode(tok, reply)
    assert by_text["logprobs"] == pytest.approx(by_ids["logprobs"], abs=1e-6)
    # The prefix is context: scoring without it gives other numbers.
    bare = worker.score(ScoreRequest(items=[{"messages": MESSAGES, "reply": reply}]))["results"][0]
    assert bare["logprobs"] != pytest.approx(by_text["logprobs"], abs=1e-4)


def test_items_longer_than_max_length_come_back_unscored(worker):
    short = {"messages": MESSAGES, "reply": "ok"}
    long = {"messages": MESSAGES * 20, "reply": "ok"}
    n = len(chat_prompt_ids(worker.policy, MESSAGES)) + 4
    out = worker.score(ScoreRequest(items=[short, long], max_length=n))["results"]
    assert "overflow" not in out[0] and len(out[0]["logprobs"]) == len(out[0]["token_ids"])
    assert out[1]["overflow"] is True and out[1]["logprobs"] == []


def test_exactly_one_reply_form():
    with pytest.raises(ValueError, match="exactly one of token_ids and reply"):
        ScoreRequest(items=[{"messages": MESSAGES}])
    with pytest.raises(ValueError, match="exactly one of token_ids and reply"):
        ScoreRequest(items=[{"messages": MESSAGES, "reply": "x", "token_ids": [1]}])


def test_offsets_say_where_each_sampled_token_starts_in_the_reply(worker):
    tok = worker.policy.tokenizer
    text = "the model reads twelve features. Action: submits"
    ids = encode(tok, text) + [tok.convert_tokens_to_ids("<|im_end|>")]
    out = worker.score(ScoreRequest(items=[{"messages": MESSAGES, "token_ids": ids}], offsets=True))["results"][0]
    offsets = out["offsets"]
    assert len(offsets) == len(ids) and offsets[0] == 0 and offsets == sorted(offsets)
    # Token i's text is the reply between its offset and the next one; the end-of-turn token adds none.
    ends = offsets[1:] + [len(text)]
    assert "".join(text[a:b] for a, b in zip(offsets, ends)) == text
    assert offsets[-1] == len(text)
    start = text.index("Action:")
    first = max(i for i, o in enumerate(offsets) if o <= start)
    assert tok.decode(ids[first:-1]).endswith("Action: submits")
