"""verl's agent loop for mlepipe's ReAct scaffold (agent_name `mlepipe_react`).

verl builds it with hydra.utils.instantiate from the export's agent_loop.yaml,
whose extra keys (the scaffold's limits) arrive as keyword arguments. Each
dataset row carries `extra_info.task_id`; the episode runs its code through
the sandbox service and leaves its record in `extra_fields`, where the reward
function (reward.py) finds it and has the service grade it."""

import os

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput

from .episode import run_episode, timed_out_under
from .models import ChatModel, RolloutModel
from .service import SandboxService


class MlepipeReactAgentLoop(AgentLoopBase):
    def __init__(self, *args, max_turns=20, step_timeout_s=90, time_budget_s=900, context_tokens=32768, mask_timeouts="drop", timeout_rule="any-step", sandbox_url=None, chat_url=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.limits = {"max_turns": int(max_turns), "step_timeout_ms": int(step_timeout_s) * 1000, "time_budget_ms": int(time_budget_s) * 1000, "context_tokens": int(context_tokens)}
        # Settings reach Ray workers as environment variables (launch.sh's runtime env) or from the YAML.
        self.mask_timeouts, self.timeout_rule = mask_timeouts, timeout_rule
        self.service = SandboxService(os.environ.get("MLEPIPE_SANDBOX_URL") or sandbox_url)
        self.chat_url = os.environ.get("MLEPIPE_CHAT_URL") or chat_url

    async def run(self, sampling_params, **kwargs):
        messages = [dict(m) for m in kwargs["raw_prompt"]]
        extra = kwargs.get("extra_info") or {}
        if self.chat_url:
            model = ChatModel(self.continuous_token_builder, self.tokenizer, messages, self.chat_url, temperature=sampling_params.get("temperature", 1.0))
        else:
            model = RolloutModel(self.continuous_token_builder, self.tokenizer, messages, self.server_manager, sampling_params, self.rollout_config.prompt_length + self.rollout_config.response_length)
        episode = await run_episode(model, self.service, extra["task_id"], messages, self.limits)
        n = self.rollout_config.response_length
        timed_out = timed_out_under(self.timeout_rule, episode)
        # A timed-out trajectory leaves the loss: its reply tokens lose their mask. verl still
        # counts its reward in the group's mean and std (what mask_timeouts: drop-after means).
        mask = [0] * len(model.mask) if timed_out and self.mask_timeouts != "keep" else model.mask
        return AgentLoopOutput(
            prompt_ids=model.prompt_ids,
            response_ids=model.response_ids[:n],
            response_mask=mask[:n],
            response_logprobs=model.logprobs[:n] if model.exact_logprobs else None,
            num_turns=len(episode["messages"]),
            metrics={},
            # verl's v1 trainer reads min/max_global_steps from every sample (the rollout server's, as ToolAgentLoop keeps them).
            extra_fields={**model.extra_fields, "mlepipe_episode": episode, "mlepipe_sandbox_url": self.service.url, "mlepipe_truncated": len(model.response_ids) > n, "mlepipe_timed_out": timed_out, "mlepipe_record_closed_at": model.closed_at},
        )
