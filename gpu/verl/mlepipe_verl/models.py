"""The two ways an episode reaches a model, both keeping verl's token record
(prompt ids, then the response: the policy's tokens with mask 1, the
observations' with mask 0):
- RolloutModel: verl's rollout servers (vLLM, SGLang) through the agent loop's
  server manager, on exact token ids;
- ChatModel: any OpenAI-compatible chat endpoint (a debugging run of the
  exported loop, or a stub server in tests); its replies are re-tokenised."""
import asyncio
import json
import urllib.request
from uuid import uuid4


def render(tokenizer, messages, generation_prompt, template_kwargs):
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=generation_prompt, tokenize=False, **template_kwargs)
    return tokenizer.encode(text, add_special_tokens=False)


class TokenRecord:
    def __init__(self, tokenizer, messages, template_kwargs):
        self.tokenizer = tokenizer
        self.kw = template_kwargs
        self.prompt_ids = render(tokenizer, messages, True, self.kw)
        self.response_ids, self.mask, self.logprobs = [], [], []
        self.count = len(messages)  # messages in the whole conversation so far

    def add(self, ids, mask, logprobs=None):
        self.response_ids += ids
        self.mask += [mask] * len(ids)
        self.logprobs += list(logprobs) if logprobs else [0.0] * len(ids)

    def delta(self, before, after, generation_prompt):
        """The tokens `after` adds to `before` once both are rendered (the chat template's
        markers included)."""
        a = render(self.tokenizer, before, not generation_prompt, self.kw)
        b = render(self.tokenizer, after, generation_prompt, self.kw)
        common = 0
        while common < min(len(a), len(b)) and a[common] == b[common]:
            common += 1
        return b[common:]

    def observed(self, messages):
        # messages ends with the assistant's reply and the observation just appended.
        self.add(self.delta(messages[:-1], messages, True), 0)
        self.count = len(messages)


class RolloutModel(TokenRecord):
    def __init__(self, tokenizer, messages, template_kwargs, server_manager, sampling_params, max_len):
        super().__init__(tokenizer, messages, template_kwargs)
        self.server, self.sampling, self.max_len = server_manager, sampling_params, max_len
        # One id for the episode: verl's server manager keeps an episode on one server (its prefix cache).
        self.request_id = uuid4().hex

    async def __call__(self, shown, turn):
        if len(self.prompt_ids) + len(self.response_ids) >= self.max_len:
            raise RuntimeError(f"the context is full ({self.max_len} tokens: prompt_length + response_length)")
        # While nothing is hidden, the model continues its own token sequence; once
        # context pruning hides turns, it sees the pruned conversation re-rendered.
        pruned = len(shown) < self.count
        ids = render(self.tokenizer, shown, True, self.kw) if pruned else self.prompt_ids + self.response_ids
        out = await self.server.generate(self.request_id, prompt_ids=ids, sampling_params=self.sampling)
        self.add(list(out.token_ids), 1, out.log_probs)
        self.count += 1
        return self.tokenizer.decode(out.token_ids, skip_special_tokens=True)


class ChatModel(TokenRecord):
    def __init__(self, tokenizer, messages, template_kwargs, base_url, model="policy", temperature=1.0, max_tokens=None):
        super().__init__(tokenizer, messages, template_kwargs)
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.body = {"model": model, "temperature": temperature, **({"max_tokens": max_tokens} if max_tokens else {})}

    def _post(self, shown):
        req = urllib.request.Request(self.url, data=json.dumps({**self.body, "messages": shown}).encode(), headers={"content-type": "application/json"}, method="POST")
        with urllib.request.urlopen(req, timeout=600) as res:
            return json.loads(res.read())["choices"][0]["message"]["content"] or ""

    async def __call__(self, shown, turn):
        text = await asyncio.get_running_loop().run_in_executor(None, self._post, shown)
        self.add(self.delta(shown, shown + [{"role": "assistant", "content": text}], False), 1)
        self.count += 1
        return text
