"""Runs the shaping agent loop (mlepipe_verl, as verl's agent-loop workers build
it) on one task against a running `mlepipe sandbox serve --export`, with the
rollout server of gpu/verl/tests/test_turn_scores.py (scripted replies, prompt
log-probabilities from a fixed function of the token ids) and Qwen3's chat
template, and prints the output's per-reply shaping as one JSON line.

    python drive_shaped.py SERVICE_URL TASK_ID"""

import asyncio
import json
import os
import sys

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "gpu", "verl", "tests")
sys.path.insert(0, TESTS)

from harness import PROMPT, agent_loop, train_tokenizer, verl_config  # noqa: E402
from test_turn_scores import ScoringServer  # noqa: E402

from mlepipe_verl.service import SandboxService  # noqa: E402


def main(url, task):
    tok = train_tokenizer("qwen3")
    server = ScoringServer(tok, tok.encode("SPICE_REFERENCE", add_special_tokens=False))
    loop = agent_loop("qwen3", server, verl_config(), max_turns=5, shaping=True)
    loop.service = SandboxService(url)
    out = asyncio.run(loop.run({"temperature": 1.0}, raw_prompt=PROMPT, extra_info={"task_id": task}))
    print(
        json.dumps(
            {
                "shaping": out.mlepipe_turn_shaping,
                "scored_requests": len(server.scored),
                "turns": [t["action"] for t in out.extra_fields["mlepipe_episode"]["turns"]],
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
