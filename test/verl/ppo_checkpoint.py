"""What test/verl/checkpoint.test.ts runs in .venv/verl: verl's own PPO trainer saves its checkpoints.

ppo_checkpoint.py DIR MODEL STEP...   PPOTrainer._save_checkpoint (verl/trainer/ppo/v1/trainer_base.py) at each
                                      STEP with trainer.default_local_dir DIR, then verl's find_latest_ckpt_path
                                      on DIR, printed as one JSON line

The trainer names the folders and writes the tracker; the actor's save is the one stand-in. verl's actor
worker hands the path it is given to its engine unchanged (workers/engine_workers.py), and the engine's
checkpoint manager writes the Hugging Face weights under PATH/huggingface when save_contents holds
hf_model, which test/verl/sft.test.ts sees verl's own SFT step do. Here the stand-in writes MODEL there.
"""

import json
import os
import shutil
import sys
from types import SimpleNamespace

from omegaconf import OmegaConf


def main(out, model, *steps):
    from verl.trainer.ppo.v1.trainer_base import PPOTrainer
    from verl.utils.checkpoint.checkpoint_manager import find_latest_ckpt_path

    saved = []

    def save_checkpoint(local_path, hdfs_path=None, global_step=0, max_ckpt_to_keep=None):
        saved.append({"path": os.path.relpath(local_path, out), "step": global_step, "keep": max_ckpt_to_keep})
        shutil.copytree(model, os.path.join(local_path, "huggingface"))

    config = OmegaConf.create(
        {
            "trainer": {
                "default_local_dir": out,
                "default_hdfs_dir": None,
                "max_actor_ckpt_to_keep": 3,
                "max_critic_ckpt_to_keep": 3,
            },
            "actor_rollout_ref": {
                "actor": {"checkpoint": {"save_contents": ["model", "optimizer", "extra", "hf_model"]}}
            },
        }
    )
    trainer = SimpleNamespace(
        config=config,
        actor_rollout_wg=SimpleNamespace(save_checkpoint=save_checkpoint),
        use_critic=False,
        trainer_mode="sync",
        train_dataloader=SimpleNamespace(state_dict=lambda: {"step": trainer.global_steps}),
        checkpoint_callback=SimpleNamespace(on_save=lambda **kw: None),
        global_steps=0,
    )
    for step in steps:
        trainer.global_steps = int(step)
        PPOTrainer._save_checkpoint(trainer)
    latest = find_latest_ckpt_path(out)
    print(json.dumps({"saved": saved, "latest": os.path.relpath(latest, out) if latest else None}))


if __name__ == "__main__":
    main(*sys.argv[1:])
