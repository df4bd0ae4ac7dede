"""Checks an export against the installed verl, the way verl.trainer.main_ppo
starts: Hydra composes verl's own ppo_trainer config with the exported
overrides, then verl's config validation runs, the rollout and actor configs
are built as the workers build them, the agent loop YAML is loaded as the
agent loop workers load it, and the reward function is imported as verl
imports it. Run from the export's folder:

    python -m mlepipe_verl.check [trainer_overrides.yaml]

Prints one JSON line; exits 1 with verl's own message when a check fails."""

import json
import os
import sys


def rollout_replicas(config, rollout):
    """As verl's LLMServerManager counts them (workers/rollout/llm_server.py): the hybrid
    worker group's GPUs over one replica's tensor x data x pipeline parallel size."""
    per_replica = rollout.tensor_model_parallel_size * rollout.data_parallel_size * rollout.pipeline_model_parallel_size
    world = config.trainer.nnodes * config.trainer.n_gpus_per_node
    return world // per_replica, per_replica, world


def main(argv):
    import yaml
    from hydra.utils import get_class
    from omegaconf import OmegaConf

    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config
    from verl.utils.device import auto_set_device
    from verl.utils.import_utils import load_extern_object

    from mlepipe_verl.config import compose

    path = argv[0] if argv else "trainer_overrides.yaml"
    with open(path, encoding="utf-8") as f:
        overrides = yaml.safe_load(f)["overrides"]
    config = compose(overrides)
    auto_set_device(config)
    validate_config(config=config, use_reference_policy=need_reference_policy(config), use_critic=need_critic(config))
    rollout = omega_conf_to_dataclass(config.actor_rollout_ref.rollout)
    actor_config = omega_conf_to_dataclass(config.actor_rollout_ref.actor)
    agents = OmegaConf.load(rollout.agent.agent_loop_config_path)
    names = []
    for entry in agents:
        get_class(entry._target_)
        names.append(entry.name)
    default = rollout.agent.default_agent_loop
    if default not in names:
        print(
            f"rows without an agent_name would run the agent loop {default!r}, which agent_loop.yaml does not register ({', '.join(names)})",
            file=sys.stderr,
        )
        return 1
    fn = config.reward.custom_reward_function
    load_extern_object(module_path=fn.path, object_name=fn.name)
    # The job's workers import the estimator's module as verl loads (VERL_USE_EXTERNAL_MODULES); so does the check.
    import mlepipe_verl.turn_credit  # noqa: F401
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn

    estimator = config.algorithm.adv_estimator
    if estimator != "grpo":
        get_adv_estimator_fn(estimator)
    shaping = [bool(entry.get("shaping", False)) for entry in agents]
    if estimator == "mlepipe_turn" and not all(shaping):
        print(
            "the mlepipe_turn estimator reads per-turn shaping the agent loop does not make (shaping: true in agent_loop.yaml)",
            file=sys.stderr,
        )
        return 1
    if any(shaping) and not os.path.exists(os.path.join("shaping", "config.json")):
        print(
            "the agent loop shapes turns but the export has no shaping/config.json for the sandbox service",
            file=sys.stderr,
        )
        return 1
    actor = config.actor_rollout_ref.actor
    sequence = rollout.prompt_length + rollout.response_length
    if actor.use_dynamic_bsz and actor.ppo_max_token_len_per_gpu * actor.ulysses_sequence_parallel_size < sequence:
        # verl packs micro-batches up to the budget times the Ulysses group and refuses a longer sequence.
        print(
            f"a trajectory of {sequence} tokens (prompt_length + response_length) exceeds the token budget of a micro-batch: ppo_max_token_len_per_gpu {actor.ppo_max_token_len_per_gpu} x ulysses_sequence_parallel_size {actor.ulysses_sequence_parallel_size}",
            file=sys.stderr,
        )
        return 1
    layout = None
    if os.path.exists("layout.json"):
        with open("layout.json", encoding="utf-8") as f:
            layout = json.load(f)
    replicas, per_replica, world = rollout_replicas(config, rollout)
    if replicas == 0:
        print(
            f"verl would start no rollout replica: {world} GPUs (trainer.nnodes x trainer.n_gpus_per_node) hold no replica of {per_replica} (tensor x data x pipeline parallel)",
            file=sys.stderr,
        )
        return 1
    print(
        json.dumps(
            {
                "ok": True,
                "rollout_replicas": replicas,
                "rollout_tp": rollout.tensor_model_parallel_size,
                "rollout": rollout.name,
                "mode": rollout.mode,
                "agent_loops": names,
                "default_agent_loop": default,
                # What each save writes (verl's own CheckpointConfig): hf_model is the weights the node hands on.
                "save_contents": list(actor_config.checkpoint.save_contents),
                "max_actor_ckpt_to_keep": config.trainer.max_actor_ckpt_to_keep,
                "adv_estimator": estimator,
                "shaping": any(shaping),
                "train_batch_size": config.data.train_batch_size,
                "n": rollout.n,
                "ppo_mini_batch_size": config.actor_rollout_ref.actor.ppo_mini_batch_size,
                "loss_agg_mode": config.actor_rollout_ref.actor.loss_agg_mode,
                "prompt_length": rollout.prompt_length,
                "response_length": rollout.response_length,
                "use_dynamic_bsz": actor.use_dynamic_bsz,
                "ppo_max_token_len_per_gpu": actor.ppo_max_token_len_per_gpu,
                "ulysses": actor.ulysses_sequence_parallel_size,
                "layout": layout,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
