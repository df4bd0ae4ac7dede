"""verl's MultiTurnSFTDataset, with each reply rendered as the turn the model
writes it in (data.custom_cls of verl's SFT trainer).

verl renders every message on its own and concatenates the pieces. Qwen3's chat
template keeps a reply's <think> block only after the conversation's last user
message, so a reply rendered alone loses its reasoning: every ReAct reply starts
with <think>...</think>, and seed-SFT would never train the reasoning. Here a
reply is rendered after an empty user turn, where the template writes it as the
model generates it, and that turn's tokens are cut off again. For templates
that do not rewrite replies (ChatML, Llama 3) the result is verl's own.
"""

import torch

from verl.utils.dataset.multiturn_sft_dataset import MultiTurnSFTDataset
from verl.utils.tokenizer.tokenizer import normalize_token_ids

EMPTY_USER = {"role": "user", "content": ""}


class ReplySFTDataset(MultiTurnSFTDataset):
    def _process_single_message(self, index, message, full_message, tools=None, enable_thinking=None):
        if message["role"] != "assistant":
            return super()._process_single_message(index, message, full_message, tools, enable_thinking)
        kwargs = dict(self.apply_chat_template_kwargs)
        if enable_thinking is not None:
            kwargs["enable_thinking"] = enable_thinking
        render = lambda ms: normalize_token_ids(  # noqa: E731
            self.tokenizer.apply_chat_template(ms, add_generation_prompt=False, tokenize=True, **kwargs)
        )
        prefix, whole = render([EMPTY_USER]), render([EMPTY_USER, message])
        if whole[: len(prefix)] != prefix:
            return super()._process_single_message(index, message, full_message, tools, enable_thinking)
        input_ids = torch.tensor(whole[len(prefix) :], dtype=torch.long)
        attention_mask = torch.ones_like(input_ids)
        loss_mask = torch.ones_like(input_ids)
        # The generation prompt is given, not generated.
        loss_mask[: len(self.generation_prompt)] = 0
        return input_ids, loss_mask, attention_mask, {}
