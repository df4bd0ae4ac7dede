"""A verl platform for a machine without accelerators, registered through verl's own
platform plugin registry (verl/plugin/platform): verl ships CUDA, NPU and ROCm
platforms only, and falls back to CUDA, so a CPU process asks for NCCL and stops
at initialize_global_process_group. This one names the CPU device and gloo, so
verl's own SFT trainer can run one step on a CPU in the tests.

    torchrun ... cpu_platform.py OVERRIDE...

runs verl.trainer.sft_trainer's SFTTrainer with verl's sft_trainer_engine config and the
overrides. The process group is started here: verl's initialize_global_process_group
(verl/utils/distributed.py) asks for the backend "cpu:gloo,<device>:<backend>", which
torch refuses for the device cpu ("Duplicate device type cpu").
"""

import contextlib
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # gpu/verl: mlepipe_verl

from verl.plugin.platform.platform_base import PlatformBase
from verl.plugin.platform.platform_manager import PlatformRegistry


class _CpuModule:
    """torch.cpu with the memory counters verl reads after each step (a CPU has no allocator stats)."""

    def __getattr__(self, name):
        return getattr(torch.cpu, name)

    def memory_reserved(self, *a, **k):
        return 0

    memory_allocated = max_memory_allocated = max_memory_reserved = memory_reserved

    def mem_get_info(self, *a, **k):
        return (0, 0)

    def empty_cache(self):
        pass

    def get_device_name(self, *a, **k):
        return "CPU"

    def reset_peak_memory_stats(self, *a, **k):
        pass


@PlatformRegistry.register(platform="cpu")
class PlatformCPU(PlatformBase):
    device_name = "cpu"
    vendor_name = "cpu"
    device_module = _CpuModule()

    def is_available(self):
        return True

    def current_device(self):
        # verl moves modules with .to(device=get_device_id()): an int would mean an accelerator's index.
        return torch.device("cpu")

    def device_count(self):
        return 1

    def set_device(self, device_index):
        pass

    def synchronize(self, device_index=None):
        pass

    def manual_seed(self, seed):
        torch.manual_seed(seed)

    def manual_seed_all(self, seed):
        torch.manual_seed(seed)

    def set_allocator_settings(self, settings):
        pass

    def empty_cache(self):
        pass

    def get_device_capability(self, device_index=0):
        return (None, None)

    def communication_backend_name(self):
        return "gloo"

    def visible_devices_envvar(self):
        return "CPU_VISIBLE_DEVICES"

    @contextlib.contextmanager
    def nvtx_range(self, msg):
        yield

    def profiler_start(self):
        pass

    def profiler_stop(self):
        pass

    def ray_resource_name(self):
        return "CPU"

    def ray_noset_envvars(self):
        return []

    def is_ipc_supported(self):
        return False

    def cudart(self):
        return None


def main(overrides):
    import verl.trainer.sft_trainer as sft_trainer
    from verl.utils.device import auto_set_device

    from mlepipe_verl.config import compose

    config = compose(overrides, "sft_trainer_engine")
    auto_set_device(config)
    torch.distributed.init_process_group(backend="gloo")
    try:
        sft_trainer.SFTTrainer(config=config).fit()
    finally:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    os.environ["VERL_PLATFORM"] = "cpu"
    main(sys.argv[1:])
