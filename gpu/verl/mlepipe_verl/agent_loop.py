"""verl's agent loop for mlepipe's scaffolds: ReAct (agent_name `mlepipe_react`),
run here, and two the sandbox service runs while this loop samples what they
ask (episode.run_served_episode): mlab (`mlepipe_mlab`, `scaffold: mlab`) and
ReAct in the released SandMLE code's format (`scaffold: react-release`), whose
parser, tools and tool responses are the TypeScript scaffold's own.

verl builds it with hydra.utils.instantiate from the export's agent_loop.yaml,
whose extra keys (the scaffold's limits) arrive as keyword arguments. Each
dataset row carries `extra_info.task_id`; the episode runs its code through
the sandbox service and leaves its record in `extra_fields`, where the reward
function (reward.py) finds it and has the service grade it.

With `shaping: true` (an export whose grpo stage shapes turns), each tool call
is scored after the episode on the rollout servers (turn_scores.py), and the
output carries β·d per reply: verl's trainer reads only the token-level
scores, so as_dict adds each reply's shaping on its last token beside the
outcome verl puts on the response's last token, and the registered estimator
(turn_credit.py) turns them into per-turn advantages."""

import asyncio
import os

from verl.experimental.agent_loop.agent_loop import AgentLoopBase, AgentLoopOutput

from .episode import run_episode, run_served_episode, timed_out_under, unknown_ending
from .models import ChatModel, RolloutModel
from .service import SandboxService
from .turn_credit import place_turn_rewards, turn_spans
from .turn_scores import score_episode, shaping_per_reply


# The scaffolds the sandbox service runs, by the loop's name, and the name of their routes (/NAME/open, /NAME/reply).
SERVED = {"mlab": "mlab", "react-release": "react"}


class ShapedAgentLoopOutput(AgentLoopOutput):
    """verl's output with each reply's shaping; verl's trainer (v1, TransferQueue) stores as_dict()."""

    mlepipe_turn_shaping: list[float] = []

    def as_dict(self):
        output = super().as_dict()
        output.pop("mlepipe_turn_shaping", None)
        if "rm_scores" in output and any(self.mlepipe_turn_shaping):
            scores = output["rm_scores"].unsqueeze(0)
            output["rm_scores"] = place_turn_rewards(
                scores, output["response_mask"].unsqueeze(0), [self.mlepipe_turn_shaping]
            )[0]
        return output


class MlepipeReactAgentLoop(AgentLoopBase):
    def __init__(
        self,
        *args,
        max_turns=20,
        step_timeout_s=90,
        time_budget_s=900,
        context_tokens=32768,
        mask_timeouts="drop",
        timeout_rule="any-step",
        sandbox_url=None,
        chat_url=None,
        shaping=False,
        scaffold="react",
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        if scaffold not in SERVED and scaffold != "react":
            raise ValueError(f"scaffold {scaffold!r}: the loop runs react, react-release or mlab")
        self.scaffold = scaffold
        self.limits = {
            "max_turns": int(max_turns),
            "step_timeout_ms": int(step_timeout_s) * 1000,
            "time_budget_ms": int(time_budget_s) * 1000,
            "context_tokens": int(context_tokens),
        }
        # Settings reach Ray workers as environment variables (launch.sh's runtime env) or from the YAML.
        self.mask_timeouts, self.timeout_rule = mask_timeouts, timeout_rule
        self.service = SandboxService(os.environ.get("MLEPIPE_SANDBOX_URL") or sandbox_url)
        self.chat_url = os.environ.get("MLEPIPE_CHAT_URL") or chat_url
        self.shaping = bool(shaping)
        if self.shaping and self.chat_url:
            raise ValueError(
                "turn shaping scores calls on verl's rollout servers (prompt log-probabilities); a chat endpoint (MLEPIPE_CHAT_URL) has none"
            )

    def model(self, messages, sampling_params):
        if self.chat_url:
            return ChatModel(
                self.continuous_token_builder,
                self.tokenizer,
                messages,
                self.chat_url,
                temperature=sampling_params.get("temperature", 1.0),
            )
        return RolloutModel(
            self.continuous_token_builder,
            self.tokenizer,
            messages,
            self.server_manager,
            sampling_params,
            self.rollout_config.prompt_length + self.rollout_config.response_length,
        )

    async def run(self, sampling_params, **kwargs):
        extra = kwargs.get("extra_info") or {}
        if self.scaffold in SERVED:
            route = SERVED[self.scaffold]
            call = lambda f, *a: asyncio.get_running_loop().run_in_executor(None, f, *a)  # noqa: E731
            # The service writes the rollout's prompt (mlab draws its tools); the row's sized verl's lengths.
            # A reply waits while the service runs the action: as long as the episode may.
            wait_s = self.limits["time_budget_ms"] / 1000 + 60
            opened = await call(
                lambda: self.service.served_open(route, extra["task_id"], extra.get("split", "train"), wait_s)
            )
            first = opened.get("request") or {}
            model = self.model(first.get("transcript") or [dict(m) for m in kwargs["raw_prompt"]], sampling_params)
            episode = await run_served_episode(model, self.service, route, opened, extra["task_id"], wait_s)
        else:
            messages = [dict(m) for m in kwargs["raw_prompt"]]
            model = self.model(messages, sampling_params)
            episode = await run_episode(model, self.service, extra["task_id"], messages, self.limits)
        # The weights' version that sampled the episode: the solution bank draws from what earlier steps verified.
        episode["step"] = int(model.extra_fields.get("min_global_steps") or 0)
        # verl runs validation through the same loop; the export tags its rows split: val. Nothing there is
        # trained, so nothing is scored, and the service keeps its solutions out of the bank.
        episode["split"] = extra.get("split", "train")
        shaping = await self.turn_shaping(model, episode) if self.shaping and episode["split"] != "val" else []
        n = self.rollout_config.response_length
        timed_out = timed_out_under(self.timeout_rule, episode)
        unknown = unknown_ending(self.timeout_rule, episode, self.limits["max_turns"])
        # A timed-out trajectory (or, under the release's rule, one of an unknown ending) leaves the loss: its
        # reply tokens lose their mask. verl still counts its reward in the group's mean and std (what
        # mask_timeouts: drop-after means).
        masked = (timed_out or unknown) and self.mask_timeouts != "keep"
        mask = [0] * len(model.mask) if masked else model.mask
        return ShapedAgentLoopOutput(
            mlepipe_turn_shaping=shaping,
            prompt_ids=model.prompt_ids,
            response_ids=model.response_ids[:n],
            response_mask=mask[:n],
            response_logprobs=model.logprobs[:n] if model.exact_logprobs else None,
            num_turns=len(episode["messages"]),
            metrics={},
            # verl's v1 trainer reads min/max_global_steps from every sample (the rollout server's, as ToolAgentLoop keeps them).
            extra_fields={
                **model.extra_fields,
                "mlepipe_episode": episode,
                "mlepipe_sandbox_url": self.service.url,
                "mlepipe_truncated": len(model.response_ids) > n,
                "mlepipe_timed_out": timed_out,
                "mlepipe_unknown_ending": unknown,
                "mlepipe_record_closed_at": model.closed_at,
            },
        )

    async def turn_shaping(self, model, episode):
        """β·d per reply of the record, from the service's plan (calls and references) and the servers' scores."""
        call = lambda f, *a: asyncio.get_running_loop().run_in_executor(None, f, *a)  # noqa: E731
        plan = await call(self.service.shaping_plan, episode)
        max_len = self.rollout_config.prompt_length + self.rollout_config.response_length
        scores = await score_episode(
            self.server_manager, self.continuous_token_builder, self.tokenizer, model, plan, max_len
        )
        # Under the shuffle control the service answers once the task's whole group has reported: wait as long as an episode may run.
        recorded = await call(self.service.shaping_record, episode, scores, self.limits["time_budget_ms"] / 1000 + 3600)
        scores = recorded.get("scores", scores) if isinstance(recorded, dict) else scores
        # β is null while the service's pilot calibrates it: the calls are scored and recorded, nothing is shaped.
        beta = plan.get("beta")
        return shaping_per_reply(scores, 0.0 if beta is None else float(beta), len(turn_spans(model.mask)))
