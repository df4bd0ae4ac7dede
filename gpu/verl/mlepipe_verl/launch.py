"""The Ray job's entrypoint: checks that the cluster can hold the run, then
becomes verl.trainer.main_ppo with the same overrides (or, given `sft` first,
verl.trainer.sft_trainer_ray, whose workers hold the GPU bundles only).

verl's trainer first starts TransferQueue, whose controller and storage units
each hold a CPU, and only then checks its GPUs; each GPU's worker bundle holds
more CPUs. On a cluster short of CPUs the placement waits forever, so a run
that cannot fit would hang instead of failing. The counts below are read from
the installed verl and TransferQueue, not restated here.

    python -m mlepipe_verl.launch [sft] OVERRIDE...
"""

import os
import sys


def needs(config, sft=False):
    """The GPUs and CPUs the run holds once started, by part."""
    from verl.single_controller.ray.base import ResourcePoolManager

    gpus = config.trainer.nnodes * config.trainer.n_gpus_per_node
    per_bundle = ResourcePoolManager.__dataclass_fields__["max_colocate_count"].default
    parts = {"the GPU workers' bundles": gpus * per_bundle}
    if sft:
        return gpus, parts
    from transfer_queue.controller import TransferQueueController
    from transfer_queue.storage.simple_storage import SimpleStorageUnit

    # main_ppo's v1 task runner turns TransferQueue on whatever the config says.
    parts["TransferQueue's controller"] = TransferQueueController._default_options.get("num_cpus", 1)
    backend = config.transfer_queue.backend
    if backend.storage_backend == "SimpleStorage":
        units = int(backend.SimpleStorage.num_data_storage_units)
        parts[f"its {units} storage units"] = units * SimpleStorageUnit._default_options.get("num_cpus", 1)
    return gpus, parts


def shortfall(config, resources, sft=False):
    """What the cluster lacks for the run, in words, or None when it fits."""
    gpus, parts = needs(config, sft)
    cpus = sum(parts.values())
    have_gpus, have_cpus = resources.get("GPU", 0), resources.get("CPU", 0)
    if have_gpus >= gpus and have_cpus >= cpus:
        return None
    held = ", ".join(f"{n} {k}" for k, n in parts.items())
    return (
        f"the Ray cluster has {have_gpus:g} GPUs and {have_cpus:g} CPUs; this run needs {gpus} GPUs "
        f"(trainer.nnodes x trainer.n_gpus_per_node) and {cpus:g} CPUs ({held}). "
        "verl would wait for them without end; start the cluster's nodes with more, or train on fewer GPUs"
    )


def host_shortfall(layout, nodes):
    """What the nodes' host memory lacks for the offloaded state, in words, or None.

    layout.json's estimate (gpu/verl/scale.ts) says how many GiB of parameters, gradients and
    optimizer state offload keeps in each node's host memory; FSDP puts them there at start, and a
    node without the room is killed by the kernel's out-of-memory handling, not refused. `nodes` is
    ray.nodes(): each alive node's `memory` resource is what Ray lets its tasks hold.
    """
    need = ((layout or {}).get("estimate") or {}).get("hostOffload", 0)
    alive = [n for n in nodes if n.get("Alive")]
    if not need or not alive:
        return None
    have = min(n.get("Resources", {}).get("memory", 0) for n in alive) / 2**30
    if have >= need:
        return None
    return (
        f"offload keeps {need:g} GiB of parameters, gradients and optimizer state in each node's host memory "
        f"(layout.json), and the smallest node of the Ray cluster has {have:.1f} GiB for tasks; "
        "start nodes with more memory, or train on more GPUs so that nothing is offloaded"
    )


def read_layout(path="layout.json"):
    """The export's layout estimate (the job runs in the export's folder), or None."""
    import json

    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv):
    import ray

    from mlepipe_verl.config import compose

    sft = bool(argv) and argv[0] == "sft"
    overrides = argv[1:] if sft else argv
    config = compose(overrides, "sft_trainer_engine" if sft else "ppo_trainer")
    ray.init(address="auto", log_to_driver=False)
    try:
        lack = shortfall(config, ray.cluster_resources(), sft) or host_shortfall(read_layout(), ray.nodes())
    finally:
        ray.shutdown()
    if lack:
        print(f"mlepipe: {lack}", file=sys.stderr, flush=True)
        return 1
    trainer = "verl.trainer.sft_trainer_ray" if sft else "verl.trainer.main_ppo"
    os.execv(sys.executable, [sys.executable, "-m", trainer, *overrides])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
