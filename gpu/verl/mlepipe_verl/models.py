"""The two ways an episode reaches a model, both keeping verl's token record
(prompt ids, then the response: the policy's tokens with mask 1, the
observations' with mask 0):
- RolloutModel: verl's rollout servers (vLLM, SGLang) through the agent loop's
  server manager, on exact token ids;
- ChatModel: any OpenAI-compatible chat endpoint (a debugging run of the
  exported loop, or a stub server in tests); its replies are re-tokenised.

The record is one growing token sequence, extended with verl's continuous-token
builder (AgentLoopBase.continuous_token_builder): sampled tokens are appended as
they came from the sampler, and each observation is tokenised on its own and
appended. The conversation is never re-rendered as a whole, because chat
templates rewrite earlier turns (Qwen3 drops the <think> block of every reply
before the latest user message; Llama 3 trims each message), and a re-render
would no longer be what the sampler was given."""

import asyncio
import json
import urllib.request
from uuid import uuid4

# verl's rollout server adds these per call; ToolAgentLoop keeps the first call's
# and the latest max_global_steps (its v1 trainer reads both from every sample).
_STEP_KEYS = ("min_global_steps", "max_global_steps")


def _same(shown, held):
    return len(shown) == len(held) and all(
        a.get("role") == b.get("role") and a.get("content") == b.get("content") for a, b in zip(shown, held)
    )


class TokenRecord:
    def __init__(self, builder, messages):
        self.builder = builder
        self.prompt_ids = list(builder.build_initial_tokens(messages))
        self.ids = list(self.prompt_ids)  # what the sampler continues from: prompt + response
        self.mask, self.logprobs = [], []
        self.exact_logprobs = True  # false once a turn came without the sampler's log-probs
        self.messages = [dict(m) for m in messages]  # the conversation the record holds
        self.closed_at = None  # the turn from which pruning keeps turns out of the record
        self.extra_fields = {}

    @property
    def response_ids(self):
        return self.ids[len(self.prompt_ids) :]

    def sampled(self, ids, logprobs, text):
        """The sampler's tokens for the reply `text`: mask 1, their log-probs beside them."""
        self.messages.append({"role": "assistant", "content": text})
        if self.closed_at is not None:
            return
        if not logprobs:
            self.exact_logprobs = False
        lp = list(logprobs) if logprobs else [0.0] * len(ids)
        merge = self.builder.merge_assistant_tokens(self.ids, list(ids))
        self.mask, self.logprobs = self.builder.align_response_metadata(
            merge, self.mask, self.logprobs, assistant_logprobs=lp
        )
        self.ids = merge.token_ids

    def observed(self, messages):
        """`messages` ends with the reply and the observation just appended: the
        observation's tokens (and the next generation prompt) get mask 0."""
        previous, self.messages = self.messages, [dict(m) for m in messages]
        if self.closed_at is not None:
            return
        merge = self.builder.merge_context_tokens(previous, self.messages, self.ids)
        self.mask, self.logprobs = self.builder.align_response_metadata(merge, self.mask, self.logprobs)
        self.ids = merge.token_ids

    def input_for(self, shown, turn):
        """The tokens the sampler is given for `shown`. While it is what the record holds they
        are the record itself; once context pruning hides turns, or the conversation keeps a
        reply cut where the record has it whole (the release's cut of an imagined tool
        response), `shown` is rendered afresh, and the record ends at the turn before (verl
        trains one sequence per trajectory: later turns were sampled from a context the
        record does not hold)."""
        if self.closed_at is None and _same(shown, self.messages):
            return self.ids
        if self.closed_at is None:
            self.closed_at = turn
        return list(self.builder.build_initial_tokens(shown))

    def took(self, extra_fields):
        if not self.extra_fields:
            self.extra_fields.update({k: extra_fields[k] for k in _STEP_KEYS if k in extra_fields})
        elif extra_fields.get("max_global_steps") is not None:
            self.extra_fields["max_global_steps"] = extra_fields["max_global_steps"]


class RolloutModel(TokenRecord):
    def __init__(self, builder, tokenizer, messages, server_manager, sampling_params, max_len):
        super().__init__(builder, messages)
        self.tokenizer = tokenizer
        self.server, self.sampling, self.max_len = server_manager, sampling_params, max_len
        # One id for the episode: verl's server manager keeps an episode on one server (its prefix cache).
        self.request_id = uuid4().hex

    async def __call__(self, shown, turn):
        ids = self.input_for(shown, turn)
        if len(ids) >= self.max_len:
            raise RuntimeError(f"the context is full ({self.max_len} tokens: prompt_length + response_length)")
        out = await self.server.generate(request_id=self.request_id, prompt_ids=ids, sampling_params=self.sampling)
        self.took(out.extra_fields or {})
        text = self.tokenizer.decode(out.token_ids, skip_special_tokens=True)
        self.sampled(out.token_ids, out.log_probs, text)
        return text

    async def side(self, messages):
        """A reply outside the record (what an mlab AI action asks the policy): sampled, never trained."""
        ids = list(self.builder.build_initial_tokens(messages))
        if len(ids) >= self.max_len:
            raise RuntimeError(f"the question is longer than the context ({self.max_len} tokens)")
        out = await self.server.generate(request_id=uuid4().hex, prompt_ids=ids, sampling_params=self.sampling)
        return self.tokenizer.decode(out.token_ids, skip_special_tokens=True)


class ChatModel(TokenRecord):
    def __init__(self, builder, tokenizer, messages, base_url, model="policy", temperature=1.0, max_tokens=None):
        super().__init__(builder, messages)
        self.tokenizer = tokenizer
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.body = {"model": model, "temperature": temperature, **({"max_tokens": max_tokens} if max_tokens else {})}

    def _post(self, shown):
        req = urllib.request.Request(
            self.url,
            data=json.dumps({**self.body, "messages": shown}).encode(),
            headers={"content-type": "application/json"},
            method="POST",
        )
        with urllib.request.urlopen(req, timeout=600) as res:
            return json.loads(res.read())["choices"][0]["message"]["content"] or ""

    async def __call__(self, shown, turn):
        self.input_for(shown, turn)
        text = await asyncio.get_running_loop().run_in_executor(None, self._post, shown)
        # The endpoint returns text, not tokens: the reply as a sampler would have ended it, at EOS.
        ids = self.tokenizer.encode(text, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        self.sampled(ids, None, text)
        return text

    async def side(self, messages):
        """A reply outside the record (what an mlab AI action asks the policy)."""
        return await asyncio.get_running_loop().run_in_executor(None, self._post, messages)
