"""The agent loop's outputs through verl 0.9.1's own post-processing: the v1
agent-loop worker's put into TransferQueue (AgentLoopWorkerTQ's
_agent_loop_postprocess: the tensordict of fields and the staleness tags),
the trainer's reading of those tags, and the v0 worker's padding into one
DataProto batch. The weights' version the rollout server reports must reach
the tags: the v1 trainer builds integer arrays from them after each update."""

import asyncio
import unittest

import numpy as np

from harness import Server, agent_loop, run, train_tokenizer, verl_config

REPLIES = ["```python\nprint('turn A')\n```", "```python\nprint('turn B')\n```", "<answer>submission.csv</answer>"]


def bare(cls, config, tokenizer):
    """A verl agent-loop worker without its Ray actor, servers or reward workers: what
    post-processing reads of it."""
    worker = object.__new__(cls)
    worker.config, worker.rollout_config = config, config.actor_rollout_ref.rollout
    worker.tokenizer, worker.processor = tokenizer, None
    worker.reward_loop_worker_handles, worker.distillation_enabled = None, False
    worker.mm_processor_kwargs = {}
    return worker


class TrainerAcceptsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = train_tokenizer("qwen3")
        cls.config = verl_config(prompt_length=1024, response_length=2048)
        # The weights change between the first and second turn (an update while the episode ran).
        cls.outputs = [
            run(agent_loop("qwen3", Server(cls.tok, REPLIES, global_steps=(3, 4, 4)), cls.config, max_turns=5))
            for _ in range(2)
        ]

    def test_global_steps_carried_as_tool_agent_loop_carries_them(self):
        for out in self.outputs:
            self.assertEqual(
                (out.extra_fields.get("min_global_steps"), out.extra_fields.get("max_global_steps")), (3, 4)
            )

    def test_v1_transfer_queue_put_and_staleness_tags(self):
        import verl.trainer.ppo.v1.agent_loop_tq as v1

        worker = bare(v1.AgentLoopWorkerTQ.__ray_metadata__.modified_class, self.config, self.tok)
        puts = []

        async def put(keys, fields, tags, partition_id):
            puts.append((keys, fields, tags, partition_id))

        original = v1.tq.async_kv_batch_put
        v1.tq.async_kv_batch_put = put
        try:
            for i, out in enumerate(self.outputs):
                kwargs = {"uid": "u0", "session_id": i, "global_steps": 4, "raw_prompt": [], "index": 0}
                asyncio.run(worker._agent_loop_postprocess(out, False, **kwargs))
        finally:
            v1.tq.async_kv_batch_put = original
        tags = [t for _, _, ts, _ in puts for t in ts]
        self.assertEqual([k for ks, _, _, _ in puts for k in ks], ["u0_0_0", "u0_1_0"])
        # The trainer reads the tags so (trainer_base.py, its rollout metrics): None would not make an int.
        spans = (
            np.array([t["max_global_steps"] for t in tags], dtype=int)
            - np.array([t["min_global_steps"] for t in tags], dtype=int)
            + 1
        )
        self.assertEqual(spans.tolist(), [2, 2])
        fields = puts[0][1]
        out = self.outputs[0]
        self.assertEqual(fields["input_ids"][0].tolist(), out.prompt_ids + out.response_ids)
        self.assertEqual(fields["loss_mask"][0].tolist(), out.response_mask)
        self.assertEqual(fields["rollout_log_probs"][0].tolist(), [float(np.float32(x)) for x in out.response_logprobs])

    def test_v0_batch(self):
        from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

        worker = bare(AgentLoopWorker, self.config, self.tok)
        padded = [asyncio.run(worker._agent_loop_postprocess(out, False, raw_prompt=[])) for out in self.outputs]
        batch = worker._postprocess(padded)
        self.assertEqual(batch.non_tensor_batch["max_global_steps"].tolist(), [4, 4])
        self.assertEqual(batch.non_tensor_batch["min_global_steps"].tolist(), [3, 3])
        n = len(self.outputs[0].response_ids)
        self.assertEqual(batch.batch["response_mask"][0, :n].tolist(), self.outputs[0].response_mask)
        self.assertEqual(int(batch.batch["response_mask"][0, n:].sum()), 0)


if __name__ == "__main__":
    unittest.main()
