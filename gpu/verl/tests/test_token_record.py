"""The agent loop's token record under real chat templates (Qwen3 with thinking
on and off, Qwen2.5's ChatML, Llama 3), each with a tokenizer trained here:
on every turn the sampler continues exactly the record so far, the record is
what it was given plus what it sampled, mask 1 lies on the sampled tokens and
nothing else, and their log-probs sit beside them. What the sampler is given
between turns is checked as text against the template's own rendering of the
observation. Run: .venv/verl/bin/python -m unittest discover gpu/verl/tests"""

import unittest

from harness import PROMPT, Server, agent_loop, run, train_tokenizer, verl_config

THINKING = [
    "<think>\nLook at the data first.\n</think>\n\n```python\nprint('turn A')\n```",
    "<think>\nNow write the file.\n</think>\n\n```python\nprint('turn B')\n```",
    "<think>\nDone.\n</think>\n\n<answer>submission.csv</answer>",
]
PLAIN = ["```python\nprint('turn A')\n```", "```python\nprint('turn B')\n```", "<answer>submission.csv</answer>"]


def text(tok, ids):
    return tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)


def render(tok, messages, generation_prompt, kw):
    return tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=generation_prompt, **kw)


def turn_gap(tok, kw):
    """What the template writes after a reply's EOS token before the next message ('\\n' in ChatML)."""
    full = render(tok, PROMPT + [{"role": "assistant", "content": "REPLY"}], False, kw)
    end = full.rindex("REPLY" + tok.eos_token) + len("REPLY" + tok.eos_token)
    return full[end:]


def observation_text(tok, observation, kw):
    """The template's rendering of one more user message and the generation prompt."""
    head = render(tok, PROMPT, False, kw)
    full = render(tok, PROMPT + [{"role": "user", "content": observation}], True, kw)
    assert full.startswith(head)
    return full[len(head) :]


class TokenRecordTest(unittest.TestCase):
    def check(self, family, replies, kw):
        tok = train_tokenizer(family)
        server = Server(tok, replies)
        out = run(agent_loop(family, server, verl_config(template_kwargs=kw), max_turns=5))
        episode = out.extra_fields["mlepipe_episode"]
        self.assertEqual(episode["ended"], "answer")
        self.assertEqual(len(server.given), 3)
        record = out.prompt_ids + out.response_ids
        # The first prompt is the template's rendering of the task.
        self.assertEqual(text(tok, server.given[0]), render(tok, PROMPT, True, kw))
        self.assertEqual(out.prompt_ids, server.given[0])
        observations = [t["observation"] for t in episode["turns"][:-1]]
        for k in range(1, 3):
            before = server.given[k - 1] + server.sampled[k - 1]
            # The sampler continues its own tokens: what it was given and sampled, unchanged ...
            self.assertEqual(server.given[k][: len(before)], before)
            # ... then the observation as the template renders it, with the end of the reply's turn.
            self.assertEqual(
                text(tok, server.given[k][len(before) :]),
                turn_gap(tok, kw) + observation_text(tok, observations[k - 1], kw),
            )
        # The record is the last prompt and the last sample: nothing lost, nothing added.
        self.assertEqual(record, server.given[-1] + server.sampled[-1])
        # Mask 1 exactly on the sampled tokens, their log-probs beside them, 0 elsewhere.
        ones = [i for i, m in enumerate(out.response_mask) if m == 1]
        self.assertEqual([out.response_ids[i] for i in ones], [t for s in server.sampled for t in s])
        self.assertEqual([out.response_logprobs[i] for i in ones], [x for s in server.logprobs for x in s])
        self.assertTrue(
            all(out.response_logprobs[i] == 0.0 for i in range(len(out.response_ids)) if out.response_mask[i] == 0)
        )
        self.assertEqual(len(out.response_mask), len(out.response_ids))
        self.assertEqual(len(out.response_logprobs), len(out.response_ids))
        # Each reply's visible text once: no reply is appended a second time.
        whole = text(tok, record)
        for marker in ("print('turn A')", "print('turn B')", "<answer>submission.csv</answer>"):
            self.assertEqual(whole.count(marker), 1, marker)

    def test_qwen3_thinking(self):
        self.check("qwen3", THINKING, {})

    def test_qwen3_thinking_off(self):
        self.check("qwen3", PLAIN, {"enable_thinking": False})

    def test_qwen2_5_chatml(self):
        self.check("qwen2_5", PLAIN, {})

    def test_llama3(self):
        self.check("llama3", PLAIN, {})

    def test_pruning_ends_the_record(self):
        """Once pruning hides a turn, the sampler gets the pruned conversation rendered afresh and
        the record stops at the turn before: it never holds tokens sampled from another context."""
        tok = train_tokenizer("qwen3")
        replies = THINKING[:2] + ["<think>\nAgain.\n</think>\n\n```python\nprint('turn C')\n```", THINKING[2]]
        server = Server(tok, replies)
        out = run(agent_loop("qwen3", server, verl_config(), max_turns=6, context_tokens=80))
        episode = out.extra_fields["mlepipe_episode"]
        self.assertEqual(episode["ended"], "answer")
        closed = out.extra_fields.get("mlepipe_record_closed_at")
        self.assertEqual(closed, 2)
        self.assertGreater(episode["dropped_turns"], 0)
        # The pruned turn's prompt is the template's rendering of what the policy was shown.
        shown = PROMPT + episode["messages"][4:6]
        self.assertEqual(text(tok, server.given[closed]), render(tok, shown, True, {}))
        # The record holds the turns before, exactly; mask 1 only on their samples.
        record = out.prompt_ids + out.response_ids
        before = server.given[closed - 1] + server.sampled[closed - 1]
        self.assertEqual(record[: len(before)], before)
        self.assertEqual(sum(out.response_mask), sum(len(s) for s in server.sampled[:closed]))
        self.assertNotIn("turn C", text(tok, record))


if __name__ == "__main__":
    unittest.main()
