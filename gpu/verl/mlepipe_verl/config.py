"""verl's trainer config as verl.trainer.main_ppo composes it: Hydra reads verl's
own ppo_trainer.yaml (or sft_trainer_engine.yaml, verl's SFT trainers' config) from
the installed package and applies the overrides."""

import os


def compose(overrides, name="ppo_trainer"):
    from hydra import compose as hydra_compose, initialize_config_dir

    import verl.trainer.main_ppo as main_ppo

    config_dir = os.path.join(os.path.dirname(main_ppo.__file__), "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return hydra_compose(config_name=name, overrides=list(overrides))
