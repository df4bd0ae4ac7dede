"""What the verl tests share: a tokenizer trained here under a real chat template
(gpu/worker/mlepipe_worker/templates/*.jinja), verl's own trainer config, a rollout server that records
what it was given, a sandbox that answers every step, and mlepipe's agent loop
built the way verl's AgentLoopWorker builds it."""

import asyncio
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "..", "..", "worker", "mlepipe_worker", "templates")
sys.path.insert(0, os.path.dirname(HERE))  # gpu/verl: the mlepipe_verl package

QWEN_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
LLAMA_SPECIAL = [
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|python_tag|>",
]

# Each family: its template fixture, the root config.json model_type verl picks its builder by,
# the special tokens, EOS and BOS, and the added (non-special) tokens the real tokenizer has.
FAMILIES = {
    "qwen3": {
        "template": "qwen3.jinja",
        "model_type": "qwen3",
        "special": QWEN_SPECIAL,
        "eos": "<|im_end|>",
        "bos": None,
        "added": ["<think>", "</think>"],
    },
    "qwen2_5": {
        "template": "qwen2_5.jinja",
        "model_type": "qwen2",
        "special": QWEN_SPECIAL,
        "eos": "<|im_end|>",
        "bos": None,
        "added": [],
    },
    "llama3": {
        "template": "llama3.jinja",
        "model_type": "llama",
        "special": LLAMA_SPECIAL,
        "eos": "<|eot_id|>",
        "bos": "<|begin_of_text|>",
        "added": [],
    },
}

CORPUS = [
    "import pandas as pd\ndf = pd.read_csv('public/train.csv')\nprint(df.shape)\n",
    "<think>\nThe sample submission has the right shape.\n</think>\n\n```python\nprint(1)\n```",
    "exit code 0\nstdout:\n(50, 3)\nsubmission.csv written <answer>submission.csv</answer>",
    "You are an ML engineer. Solve the task. Cutting Knowledge Date: December 2023 Today Date:",
] * 20


def train_tokenizer(family):
    """A byte-level BPE trained on a small corpus, carrying the family's special tokens and its real template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    f = FAMILIES[family]
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(
        CORPUS,
        trainers.BpeTrainer(
            vocab_size=600,
            special_tokens=f["special"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,
        ),
    )
    with open(os.path.join(TEMPLATES, f["template"]), encoding="utf-8") as fh:
        template = fh.read()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=f["eos"], bos_token=f["bos"], pad_token=f["special"][0], chat_template=template
    )
    if f["added"]:
        fast.add_tokens(f["added"])
    return fast


def verl_config(prompt_length=4096, response_length=8192, template_kwargs=None):
    """verl's ppo_trainer config, composed by Hydra as main_ppo composes it."""
    from omegaconf import OmegaConf

    from mlepipe_verl.config import compose

    config = compose(
        [
            f"actor_rollout_ref.rollout.prompt_length={prompt_length}",
            f"actor_rollout_ref.rollout.response_length={response_length}",
        ]
    )
    OmegaConf.set_struct(config, False)
    config.data.apply_chat_template_kwargs = template_kwargs or {}
    return config


class Output:
    """verl's TokenOutput, as the server manager returns it."""

    def __init__(self, token_ids, log_probs, extra_fields):
        self.token_ids, self.log_probs, self.extra_fields = token_ids, log_probs, extra_fields
        self.num_preempted, self.routed_experts, self.stop_reason = None, None, "completed"


class Server:
    """A rollout server: each call samples the next scripted reply, ended at EOS, with
    distinct log-probs, and records the prompt ids it was given. `global_steps` is the
    weights' version, as verl's rollout server reports it."""

    def __init__(self, tokenizer, replies, global_steps=(3,)):
        self.tokenizer, self.replies, self.steps = tokenizer, list(replies), list(global_steps)
        self.given, self.sampled, self.logprobs = [], [], []

    async def generate(self, request_id, prompt_ids, sampling_params, **kwargs):
        k = len(self.given)
        ids = self.tokenizer.encode(self.replies[min(k, len(self.replies) - 1)], add_special_tokens=False) + [
            self.tokenizer.eos_token_id
        ]
        lp = [-(k + 1) - i / 1000 for i in range(len(ids))]
        self.given.append(list(prompt_ids))
        self.sampled.append(ids)
        self.logprobs.append(lp)
        step = self.steps[min(k, len(self.steps) - 1)]
        return Output(ids, lp, {"global_steps": step, "min_global_steps": step, "max_global_steps": step})


class Sandbox:
    """The sandbox service: every code step exits 0 with a fixed observation."""

    url = "http://sandbox.invalid"

    def __init__(self, observation="exit code 0\nstdout:\n(50, 3)"):
        self.observation = observation

    def open(self, task_id):
        return "session-1"

    def run(self, session, code, turn, timeout_ms):
        return {"observation": f"{self.observation} [{turn}]", "timed_out": False, "exit_code": 0, "duration_ms": 5}

    def validate(self, session, path):
        return "valid"


def agent_loop(family, server, config, **limits):
    """mlepipe's agent loop, instantiated with the arguments verl's AgentLoopWorker passes."""
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap

    from mlepipe_verl.agent_loop import MlepipeReactAgentLoop

    loop = MlepipeReactAgentLoop(
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=server.tokenizer,
        processor=None,
        hf_model_type=FAMILIES[family]["model_type"],
        dataset_cls=None,
        data_config=DictConfigWrap(config.data),
        sandbox_url=Sandbox.url,
        **limits,
    )
    loop.service = Sandbox()
    return loop


PROMPT = [
    {"role": "system", "content": "You are an ML engineer. Solve the task."},
    {"role": "user", "content": "Predict the target of public/test.csv and write submission.csv."},
]


def run(loop, prompt=PROMPT):
    return asyncio.run(loop.run({"temperature": 1.0}, raw_prompt=prompt, extra_info={"task_id": "t1"}))
