"""Turn-level credit for verl: the advantage estimator `mlepipe_turn` (MLToolBench
Eq. 2–3, as agents/shaping/returns.ts computes it for mlepipe's own trainer).

verl hands a registered estimator only the token-level rewards, the response
mask, the group ids and the algorithm config (ray_trainer.compute_advantage,
in both the v0 and the v1 trainer), never the batch's non-tensor fields. So the
per-turn rewards travel in the token-level reward tensor itself: the outcome R
where verl puts it (the response's last token), and each turn's shaping β·d_s on
the last token of that turn's reply (place_turn_rewards). The turns are the runs
of mask-1 tokens: the agent loop's record gives mask 1 to the sampled reply
tokens and to nothing else, so each run is one reply.

Â_{i,s} = G_{i,s} − mean_i G_{i,1}, G_{i,s} the rewards from turn s's first
token to the end, the mean over the group's members that still have reply
tokens: a member whose mask the agent loop cleared (a timed-out or dropped
trajectory) takes no part in the baseline and gets no advantage. No std scaling;
a group whose outcomes are equal keeps its later turns' differences. With no
shaping every turn's return is R, and the advantages equal verl's `grpo` with
norm_adv_by_std_in_grpo=false on the same batch (groups of two or more).

Loaded in a verl job through VERL_USE_EXTERNAL_MODULES=mlepipe_verl.turn_credit
(the export's launch environment): importing it registers the estimator."""

from collections import defaultdict

import numpy as np
import torch

NAME = "mlepipe_turn"


def turn_spans(mask_row):
    """The [start, end) spans of the runs of 1 in one row of the response mask (a tensor row or a
    list): one per reply."""
    m = [int(x) for x in (mask_row.tolist() if hasattr(mask_row, "tolist") else mask_row)]
    spans, start = [], None
    for i, x in enumerate(m + [0]):
        if x and start is None:
            start = i
        elif not x and start is not None:
            spans.append((start, i))
            start = None
    return spans


def place_turn_rewards(scores, response_mask, shaping):
    """Adds shaping[i][s] (β·d_s, None or 0 for an unscored turn) on the last reply token of
    row i's turn s, in a copy of the token-level scores (which hold the outcome)."""
    out = scores.clone()
    for i, row in enumerate(shaping):
        spans = turn_spans(response_mask[i])
        for s, value in enumerate(row or []):
            if value and s < len(spans):
                out[i, spans[s][1] - 1] += float(value)
    return out


def turn_credit_advantage(token_level_rewards, response_mask, index, config=None, **kwargs):
    """verl's estimator interface: (advantages, returns), both [bsz, response_length]."""
    with torch.no_grad():
        rewards = token_level_rewards.to(torch.float32)
        # Rewards from each token to the end of the response: G at a turn's first token is G_{i,s}.
        to_go = torch.flip(torch.cumsum(torch.flip(rewards, [1]), 1), [1])
        returns = torch.zeros_like(rewards)
        firsts = defaultdict(list)
        spans = [turn_spans(response_mask[i]) for i in range(rewards.shape[0])]
        for i, row in enumerate(spans):
            for start, end in row:
                returns[i, start:end] = to_go[i, start]
            if row:  # a member without reply tokens is masked: out of the baseline
                firsts[index[i]].append(float(rewards[i].sum()))
        baseline = {k: float(np.mean(v)) for k, v in firsts.items()}
        advantages = torch.zeros_like(rewards)
        for i, row in enumerate(spans):
            for start, end in row:
                advantages[i, start:end] = returns[i, start:end] - baseline[index[i]]
        advantages = advantages * response_mask
    return advantages, returns * response_mask


def register():
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY, register_adv_est

    if ADV_ESTIMATOR_REGISTRY.get(NAME) is not turn_credit_advantage:
        register_adv_est(NAME)(turn_credit_advantage)


try:
    register()
except ImportError:  # without verl (the export's checks, tests of the pure parts)
    pass
