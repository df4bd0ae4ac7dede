"""The turn-level estimator (mlepipe_verl/turn_credit.py) through verl 0.9.1's own
advantage dispatch (ray_trainer.compute_advantage) on DataProto batches of
three-turn trajectories: hand-worked groups, the masked member out of the
baseline, and equality with verl's `grpo` (norm_adv_by_std_in_grpo=false) when
there is no shaping. `python test_turn_credit.py case` prints the case and its per-turn
advantages for test/fixtures/gpu/verl/turn-credit.test.ts, which compares them with mlepipe's
own trainer path (agents/shaping/returns.ts)."""

import json
import sys
import unittest

import numpy as np
import torch

import harness  # puts mlepipe_verl on the path

# One response of 12 positions: reply 1 at 0–1, its observation 2–3, reply 2 at 4–5,
# observation 6–7, reply 3 at 8–9, padding 10–11.
TURNS = [(0, 2), (4, 6), (8, 10)]
LENGTH, LAST = 12, 9

# Per member: uid, outcome R, per-turn shaping β·d (None: unscored), masked (timed out).
CASE = [
    ("u0", 1.0, [0.2, -0.1, 0.3], False),
    ("u0", 0.0, [None, 0.4, -0.2], False),
    ("u1", 1.0, [None, None, None], False),
    ("u1", 1.0, [-0.5, 0.0, None], False),
    ("u1", 0.0, [0.7, 0.7, 0.7], True),
]
# G_{i,s} − mean_i G_{i,1}, worked by hand: u0's baseline (1.4 + 0.2) / 2 = 0.8; u1's (1 + 0.5) / 2,
# the masked member out of it; u1's outcomes are equal and its later turns still differ.
EXPECTED = [[0.6, 0.4, 0.5], [-0.6, -0.6, -1.0], [0.25, 0.25, 0.25], [-0.25, 0.25, 0.25], [0.0, 0.0, 0.0]]


def batch(case=CASE, shaping=True):
    from verl import DataProto

    from mlepipe_verl.turn_credit import place_turn_rewards

    n = len(case)
    mask = torch.zeros(n, LENGTH, dtype=torch.int64)
    attention = torch.zeros(n, LENGTH, dtype=torch.int64)
    attention[:, : LAST + 1] = 1
    scores = torch.zeros(n, LENGTH)
    for i, (_, outcome, _, masked) in enumerate(case):
        if not masked:  # the agent loop clears a timed-out trajectory's mask
            for a, b in TURNS:
                mask[i, a:b] = 1
        scores[i, LAST] = outcome  # where verl's agent-loop worker puts rm_scores
    if shaping:
        scores = place_turn_rewards(scores, mask, [c[2] for c in case])
    data = DataProto.from_dict(
        tensors={
            "response_mask": mask,
            "attention_mask": attention,
            "token_level_scores": scores,
            "token_level_rewards": scores.clone(),
        }
    )
    data.non_tensor_batch["uid"] = np.array([c[0] for c in case], dtype=object)
    return data


def per_turn(adv):
    return [[round(float(adv[i, a]), 6) for a, _ in TURNS] for i in range(adv.shape[0])]


def advantages(data, estimator, norm=False):
    from verl.trainer.ppo.ray_trainer import compute_advantage

    return compute_advantage(
        data, adv_estimator=estimator, norm_adv_by_std_in_grpo=norm, num_repeat=1, config=None
    ).batch["advantages"]


class TurnCreditTest(unittest.TestCase):
    def test_registered_with_verl(self):
        from verl.trainer.ppo.core_algos import get_adv_estimator_fn

        from mlepipe_verl.turn_credit import NAME, turn_credit_advantage

        self.assertIs(get_adv_estimator_fn(NAME), turn_credit_advantage)

    def test_loaded_through_verl_external_modules(self):
        """A fresh interpreter: `import verl` alone, with the export's environment, registers it."""
        import os
        import subprocess

        code = "import verl\nfrom verl.trainer.ppo.core_algos import get_adv_estimator_fn\nprint(get_adv_estimator_fn('mlepipe_turn').__module__)"
        env = {
            **os.environ,
            "VERL_USE_EXTERNAL_MODULES": "mlepipe_verl.turn_credit",
            "PYTHONPATH": os.path.dirname(harness.HERE),
        }
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
        self.assertEqual(run.returncode, 0, run.stderr[-2000:])
        self.assertEqual(run.stdout.strip().splitlines()[-1], "mlepipe_verl.turn_credit")

    def test_v1_trainer_dispatch(self):
        """The v1 trainer's compute_advantage_for_multi_trajectories hands a non-grpo estimator the whole batch."""
        from verl.trainer.ppo.v1.utils import compute_advantage_for_multi_trajectories

        keys = [f"{u}_{i}_0" for i, (u, _, _, _) in enumerate(CASE)]
        out = compute_advantage_for_multi_trajectories(
            batch(),
            batch_keys=keys,
            adv_estimator="mlepipe_turn",
            num_repeat=1,
            norm_adv_by_std_in_grpo=False,
            config=None,
        )
        self.assertEqual(per_turn(out.batch["advantages"]), EXPECTED)

    def test_hand_worked_groups(self):
        adv = advantages(batch(), "mlepipe_turn")
        self.assertEqual(per_turn(adv), EXPECTED)
        # Each turn's advantage lies on its reply tokens alone: constant across the reply, zero elsewhere.
        data = batch()
        for i in range(len(CASE)):
            for s, (a, b) in enumerate(TURNS):
                self.assertTrue(torch.allclose(adv[i, a:b], torch.full((b - a,), EXPECTED[i][s]), atol=1e-6))
            self.assertEqual(float((adv[i] * (1 - data.batch["response_mask"][i])).abs().sum()), 0.0)

    def test_no_shaping_is_verls_grpo_without_std(self):
        plain = [(u, r, [None] * 3, False) for u, r, _, _ in CASE] + [
            ("u2", 0.3, [None] * 3, False),
            ("u2", -0.4, [None] * 3, False),
        ]
        ours = advantages(batch(plain, shaping=False), "mlepipe_turn")
        verls = advantages(batch(plain, shaping=False), "grpo", norm=False)
        self.assertTrue(torch.allclose(ours, verls, atol=1e-6), (ours, verls))
        self.assertGreater(float(verls.abs().sum()), 0.0)
        # β = 0: the shaping placed is all zero, and the advantages are verl's again.
        zero = [(u, r, [0.0 if x is not None else None for x in d], False) for u, r, d, _ in plain]
        self.assertTrue(torch.allclose(advantages(batch(zero), "mlepipe_turn"), verls, atol=1e-6))


if __name__ == "__main__":
    if sys.argv[1:] == ["case"]:
        print(
            json.dumps(
                {
                    "case": [{"uid": u, "outcome": r, "shaping": d, "masked": m} for u, r, d, m in CASE],
                    "advantages": per_turn(advantages(batch(), "mlepipe_turn")),
                }
            )
        )
    else:
        unittest.main()
