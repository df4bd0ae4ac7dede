"""How long a reply may be: the request's max_tokens, else the rest of the model's context (as vLLM and the
OpenAI API do), never a fixed cap that cuts replies which think before they act."""

import mlepipe_worker.chat as chat_mod
from mlepipe_worker.generate import chat_prompt_ids
from mlepipe_worker.protocol import ChatRequest

MESSAGES = [{"role": "user", "content": "the agent reads the csv"}]


def asked(monkeypatch, policy, **req):
    seen = []
    real = chat_mod.generate_groups

    def recording(policy, groups, **kw):
        seen.append(groups[0].max_new_tokens)
        groups[0].max_new_tokens = 1
        return real(policy, groups, **kw)

    monkeypatch.setattr(chat_mod, "generate_groups", recording)
    out = chat_mod.complete(policy, ChatRequest(messages=MESSAGES, **req), model_id="tiny", step=0)
    return seen[0], out


def test_no_max_tokens_leaves_the_rest_of_the_context(make_policy, monkeypatch):
    policy = make_policy(lora=False)
    context = policy.model.config.max_position_embeddings
    prompt = chat_prompt_ids(policy, MESSAGES)
    room, out = asked(monkeypatch, policy)
    assert room == context - len(prompt)
    assert room > 256
    assert out["usage"]["prompt_tokens"] == len(prompt)


def test_max_tokens_is_kept_and_the_context_still_bounds_it(make_policy, monkeypatch):
    policy = make_policy(lora=False)
    context = policy.model.config.max_position_embeddings
    prompt = chat_prompt_ids(policy, MESSAGES)
    assert asked(monkeypatch, policy, max_tokens=7)[0] == 7
    assert asked(monkeypatch, policy, max_completion_tokens=5, max_tokens=9)[0] == 5
    assert asked(monkeypatch, policy, max_tokens=context * 2)[0] == context - len(prompt)
