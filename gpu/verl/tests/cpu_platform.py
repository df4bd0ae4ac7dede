"""verl's own SFT trainer on a machine without accelerators, for the tests: the platform and the
process-group backend come from mlepipe_verl.cpu, the module a CPU run's job loads in every process
(`verl: { device: cpu }`), so the test runs on the same mends as the product.

    torchrun ... cpu_platform.py OVERRIDE...

runs verl.trainer.sft_trainer's SFTTrainer with verl's sft_trainer_engine config and the overrides, in one
process that torchrun started (no Ray: the job's sft_trainer_ray is what `trainer: verl` runs).
"""

import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # gpu/verl: mlepipe_verl

import mlepipe_verl.cpu  # noqa: F401  (registers the CPU platform, reads "cpu:gloo,cpu:gloo" as gloo)


def main(overrides):
    import verl.trainer.sft_trainer as sft_trainer
    from verl.utils.device import auto_set_device

    from mlepipe_verl.config import compose

    config = compose(overrides, "sft_trainer_engine")
    auto_set_device(config)
    # verl's backend string for this platform, which mlepipe_verl.cpu reads as gloo.
    torch.distributed.init_process_group(backend="cpu:gloo,cpu:gloo")
    try:
        sft_trainer.SFTTrainer(config=config).fit()
    finally:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    os.environ["VERL_PLATFORM"] = "cpu"
    main(sys.argv[1:])
