"""SPICE and TIPS scored inside the agent loop (mlepipe_verl/turn_scores.py) against a
rollout server whose prompt log-probabilities come from a fixed table over
token ids, under Qwen3's real chat template with a tokenizer trained here:
the d of each call equals the table's value worked out from the call's own
token ids (found here from the tokenizer's offsets, not the loop's bisection);
overflow and a task without references leave a call unscored; and verl's own
code takes the shaping from the output (AgentLoopOutput.as_dict, then the v1
trainer's advantage dispatch with the mlepipe_turn estimator)."""

import re
import unittest

import numpy as np
import torch

from harness import PROMPT, Sandbox, agent_loop, run, train_tokenizer, verl_config

REPLIES = [
    "<think>\nLook at the data first.\n</think>\n\n```python\nprint('turn A')\n```",
    "<think>\nNow write the file.\n</think>\n\n```python\nprint(1)\n```",
    "<think>\nDone.\n</think>\n\n<answer>submission.csv</answer>",
]
REFERENCE = {
    "role": "user",
    "content": "SPICE_REFERENCE:\nA verified solution: it ran code (print(1)).\n\nSPICE_INSTRUCTION: give the next tool call.",
}


def table(prefix, token, marker):
    """log q(token | prefix): a fixed function of the ids; a prefix holding the reference's
    marker ids raises it by 0.05 · (token mod 3 + 1), never 0, so that a call token missed or
    a padding entry counted shows in d."""
    base = -0.1 * (token % 5 + 1)
    seen = any(prefix[i : i + len(marker)] == marker for i in range(len(prefix) - len(marker) + 1))
    return base + (0.05 * (token % 3 + 1) if seen else 0.0)


class ScoringServer:
    """Samples the scripted replies (verl's TokenOutput, ended at EOS) and answers scoring
    requests (prompt_logprobs set) as vLLM does through verl: entry j is the log-probability of
    token j + 1, the last entry padding."""

    def __init__(self, tokenizer, marker):
        from verl.workers.rollout.replica import TokenOutput

        self.TokenOutput, self.tokenizer, self.marker = TokenOutput, tokenizer, marker
        self.samples, self.scored = 0, []

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        if sampling_params.get("prompt_logprobs") is not None:
            ids = list(prompt_ids)
            self.scored.append(ids)
            lps = [[table(ids[: j + 1], ids[j + 1], self.marker)] for j in range(len(ids) - 1)] + [[0.0]]
            pids = [[ids[j + 1]] for j in range(len(ids) - 1)] + [[0]]
            return self.TokenOutput(
                token_ids=[0],
                log_probs=None,
                extra_fields={"prompt_logprobs": lps, "prompt_ids": pids, "global_steps": 2},
            )
        reply = REPLIES[min(self.samples, len(REPLIES) - 1)]
        self.samples += 1
        ids = self.tokenizer.encode(reply, add_special_tokens=False) + [self.tokenizer.eos_token_id]
        return self.TokenOutput(
            token_ids=ids,
            log_probs=[-0.5] * len(ids),
            extra_fields={"global_steps": 2, "min_global_steps": 2, "max_global_steps": 2},
        )


class ShapingSandbox(Sandbox):
    """The service's shaping routes as the Python loop sees them: the calls (ReAct code blocks) and one reference."""

    def __init__(self, references, beta=2.0):
        super().__init__()
        self.references, self.beta, self.recorded = references, beta, []
        # The summaries inside the reference messages and the text around one (the service's plan).
        self.summaries, self.frame = [], None

    def shaping_plan(self, episode):
        calls = []
        replies = [m for m in episode["messages"] if m["role"] == "assistant"]
        for s, t in enumerate(episode["turns"]):
            m = re.search(r"```python\n[\s\S]*?```", replies[s]["content"]) if t["action"] == "code" else None
            if m:
                history = episode["messages"][: 2 + 2 * s]
                calls.append(
                    {
                        "turn": s,
                        "category": "execution",
                        "history": history,
                        "prefix_chars": m.start(),
                        "call_chars": m.end() - m.start(),
                    }
                )
        cut = {"reference_summaries": self.summaries, "reference_frame": self.frame} if self.frame else {}
        return {"calls": calls, "references": self.references, "beta": self.beta, **cut}

    def shaping_record(self, episode, scores, timeout_s=None):
        self.recorded.append((episode["step"], scores))
        return {"recorded": len(scores), "scores": scores}


class TipsSandbox(ShapingSandbox):
    """The service's TIPS plan: each call's history before it and after its observation, the summaries and the request."""

    def shaping_plan(self, episode):
        plan = super().shaping_plan(episode)
        for c in plan["calls"]:
            c["after"] = episode["messages"][: 2 + 2 * (c["turn"] + 1)]
        return {
            "kind": "tips",
            "calls": plan["calls"],
            "summaries": self.references,
            "request": {"role": "user", "content": "TIPS_INSTRUCTION: Describe the approach."},
            "beta": self.beta,
        }


def call_token_ids(tok, reply):
    """The call's tokens, from the tokenizer's own offsets over the reply text."""
    m = re.search(r"```python\n[\s\S]*?```", reply)
    enc = tok(reply, add_special_tokens=False, return_offsets_mapping=True)
    return [
        i for i, (a, b) in zip(enc["input_ids"], enc["offset_mapping"], strict=True) if a < m.end() and b > m.start()
    ]


def loop_with(references, prompt_length=4096, response_length=8192):
    tok = train_tokenizer("qwen3")
    marker = tok.encode("SPICE_REFERENCE", add_special_tokens=False)
    server = ScoringServer(tok, marker)
    loop = agent_loop(
        "qwen3",
        server,
        verl_config(prompt_length=prompt_length, response_length=response_length),
        max_turns=5,
        shaping=True,
    )
    loop.service = ShapingSandbox(references)
    return tok, server, loop


class TurnScoresTest(unittest.TestCase):
    def test_d_of_each_call_from_the_tables_ids(self):
        tok, server, loop = loop_with([REFERENCE])
        out = run(loop, PROMPT)
        ((step, scores),) = loop.service.recorded
        self.assertEqual(step, 2)
        self.assertEqual([s["turn"] for s in scores], [0, 1])
        for s, reply in zip(scores, REPLIES[:2], strict=True):
            ids = call_token_ids(tok, reply)
            want = sum(0.05 * (t % 3 + 1) for t in ids) / len(ids)
            self.assertAlmostEqual(s["d"], want, places=9)
        # Two branches per call (plain, one reference); each ends with the call's last sampled token.
        self.assertEqual(len(server.scored), 4)
        # The shaping rides on each reply: β·d at turns 0 and 1, nothing on the answer.
        self.assertEqual(len(out.mlepipe_turn_shaping), 3)
        self.assertAlmostEqual(out.mlepipe_turn_shaping[0], 2.0 * scores[0]["d"], places=9)
        self.assertEqual(out.mlepipe_turn_shaping[2], 0.0)

    def test_tips_potential_before_and_after_each_call(self):
        # The table raises every token after a prefix that holds turn A's code: only turn 0's
        # observation brings it into the history, so turn 0 gains the summaries' bonus and turn 1 none.
        tok = train_tokenizer("qwen3")
        server = ScoringServer(tok, tok.encode("turn A", add_special_tokens=False))
        loop = agent_loop("qwen3", server, verl_config(), max_turns=5, shaping=True)
        summaries = ["A verified solution: it ran code (print(1)).", "It fit a model."]
        loop.service = TipsSandbox(summaries)
        out = run(loop, PROMPT)
        ((_, scores),) = loop.service.recorded
        per = [
            sum(0.05 * (t % 3 + 1) for t in ids) / len(ids)
            for ids in (tok.encode(x, add_special_tokens=False) for x in summaries)
        ]
        self.assertAlmostEqual(scores[0]["d"], sum(per) / len(per), places=9)
        self.assertAlmostEqual(scores[1]["d"], 0.0, places=9)
        # Three distinct histories (before turn 0, after it = before turn 1, after turn 1), two summaries each.
        self.assertEqual(len(server.scored), 6)
        self.assertAlmostEqual(out.mlepipe_turn_shaping[0], 2.0 * scores[0]["d"], places=9)

    def test_the_shaping_follows_the_scores_the_service_answers_with(self):
        # Under the shuffle control the service answers with the group's permuted scores: those shape the turns.
        _, _, loop = loop_with([REFERENCE])

        def swapped(episode, scores, timeout_s=None):
            self.assertGreater(timeout_s, 900)  # as long as an episode may run, beyond the client's default
            return {"scores": [{**scores[0], "d": scores[1]["d"]}, {**scores[1], "d": scores[0]["d"]}]}

        loop.service.shaping_record = swapped
        mine = run(loop, PROMPT)
        _, _, plain = loop_with([REFERENCE])
        ref = run(plain, PROMPT)
        self.assertAlmostEqual(mine.mlepipe_turn_shaping[0], ref.mlepipe_turn_shaping[1], places=12)
        self.assertAlmostEqual(mine.mlepipe_turn_shaping[1], ref.mlepipe_turn_shaping[0], places=12)

    def test_a_validation_episode_is_not_scored(self):
        import asyncio

        _, server, loop = loop_with([REFERENCE])
        out = asyncio.run(
            loop.run({"temperature": 1.0}, raw_prompt=PROMPT, extra_info={"task_id": "t1", "split": "val"})
        )
        self.assertEqual((loop.service.recorded, server.scored, out.mlepipe_turn_shaping), ([], [], []))
        self.assertEqual(out.extra_fields["mlepipe_episode"]["split"], "val")

    def test_a_pilot_step_scores_and_shapes_nothing(self):
        # β is null while the service's pilot calibrates it: the calls are scored and recorded.
        _, _, loop = loop_with([REFERENCE])
        loop.service.beta = None
        out = run(loop, PROMPT)
        self.assertTrue(all(s["d"] is not None for s in loop.service.recorded[0][1]))
        self.assertEqual(out.mlepipe_turn_shaping, [0.0, 0.0, 0.0])

    def test_no_reference_and_overflow_leave_calls_unscored(self):
        _, server, loop = loop_with([])
        out = run(loop, PROMPT)
        self.assertEqual([s["reason"] for s in loop.service.recorded[0][1]], ["no-reference", "no-reference"])
        self.assertEqual(server.scored, [])
        self.assertEqual(out.mlepipe_turn_shaping, [0.0, 0.0, 0.0])
        # A context too short for the reference branch (the plain one fits): the call is unscored.
        tok, server, loop = loop_with(
            [{"role": "user", "content": "SPICE_REFERENCE " * 400}], prompt_length=200, response_length=200
        )
        run(loop, PROMPT)
        self.assertEqual([s["reason"] for s in loop.service.recorded[0][1]], ["overflow", "overflow"])

    def test_a_reference_over_the_context_is_cut_to_fit(self):
        # The paper's App. D.2: the history and the call stay whole, only the summary is cut, to
        # the longest word prefix that fits; the call is then scored with it.
        summary = " ".join(f"w{i}" for i in range(300))
        frame = ["SPICE_REFERENCE:\n", "\n\nSPICE_INSTRUCTION: give the next tool call."]
        tok, server, loop = loop_with(
            [{"role": "user", "content": frame[0] + summary + frame[1]}], prompt_length=200, response_length=200
        )
        loop.service.summaries, loop.service.frame = [summary], frame
        run(loop, PROMPT)
        scores = loop.service.recorded[0][1]
        self.assertEqual([(s["d"] is not None, s.get("truncated")) for s in scores], [(True, 1), (True, 1)])
        branches = [tok.decode(ids) for ids in server.scored if "SPICE_REFERENCE" in tok.decode(ids)]
        self.assertEqual(len(branches), 2)
        for text in branches:
            kept = re.search(r"SPICE_REFERENCE:\n(.*?)\n\nSPICE_INSTRUCTION", text, re.S).group(1).split()
            # A prefix of the summary's words, cut short; the call's code still ends the branch.
            self.assertTrue(0 < len(kept) < 300 and kept == summary.split()[: len(kept)], kept[-3:])
            self.assertIn("print(", text[-40:])
        self.assertTrue(all(len(ids) <= 400 for ids in server.scored))

    def test_verl_reads_the_shaping_from_the_output(self):
        from verl import DataProto
        from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories

        import mlepipe_verl.turn_credit  # noqa: F401 (registers mlepipe_turn)

        outs = []
        for refs in ([REFERENCE], [REFERENCE]):
            _, _, loop = loop_with(refs)
            o = run(loop, PROMPT)
            o.reward_score = 1.0
            outs.append(o)
        outs[1].reward_score = 0.0
        fields = [o.as_dict() for o in outs]
        for o, f in zip(outs, fields, strict=True):
            self.assertNotIn("mlepipe_turn_shaping", f)
            mask = f["response_mask"]
            ends = [i for i in range(len(mask)) if mask[i] == 1 and (i + 1 == len(mask) or mask[i + 1] == 0)]
            scores = f["rm_scores"]
            # verl's outcome on the last token, each reply's β·d on its own last token.
            self.assertAlmostEqual(float(scores[-1]), o.reward_score + o.mlepipe_turn_shaping[2], places=5)
            for s in range(2):
                self.assertAlmostEqual(float(scores[ends[s]]), o.mlepipe_turn_shaping[s], places=5)
        width = max(len(f["rm_scores"]) for f in fields)
        pad = lambda t: torch.nn.functional.pad(t, (0, width - len(t)))  # noqa: E731
        data = DataProto.from_dict(
            tensors={
                "token_level_scores": torch.stack([pad(f["rm_scores"]) for f in fields]),
                "token_level_rewards": torch.stack([pad(f["rm_scores"]) for f in fields]),
                "response_mask": torch.stack([pad(f["response_mask"]) for f in fields]),
            },
            non_tensors={"uid": np.array(["u", "u"], dtype=object)},
        )
        adv = compute_advantage_for_multi_trajectories(
            data,
            batch_keys=["u_0_0", "u_1_0"],
            adv_estimator="mlepipe_turn",
            num_repeat=2,
            norm_adv_by_std_in_grpo=False,
        ).batch["advantages"]
        # Turn 0 of member 0: its return from turn 0 minus the group's mean complete return.
        total = [float(f["rm_scores"].sum()) for f in fields]
        first = fields[0]["response_mask"].tolist().index(1)
        self.assertAlmostEqual(float(adv[0, first]), total[0] - sum(total) / 2, places=5)
        second = [
            i for i in range(1, width) if fields[0]["response_mask"][i] == 1 and fields[0]["response_mask"][i - 1] == 0
        ][0]
        self.assertAlmostEqual(
            float(adv[0, second]), total[0] - outs[0].mlepipe_turn_shaping[0] - sum(total) / 2, places=5
        )


if __name__ == "__main__":
    unittest.main()
