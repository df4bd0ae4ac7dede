"""The job's entrypoint refuses a cluster that cannot hold the run, with the
counts read from the installed verl and TransferQueue, instead of letting
verl's placement wait forever (TransferQueue's storage units hold a CPU each
before verl ever checks its GPUs)."""

import unittest

import harness  # noqa: F401  (puts mlepipe_verl on the path)
from mlepipe_verl.config import compose
from mlepipe_verl.launch import host_shortfall, needs, shortfall

ONE_GPU = ["trainer.nnodes=1", "trainer.n_gpus_per_node=1"]


class LaunchTest(unittest.TestCase):
    def test_counts_come_from_verl_and_transfer_queue(self):
        gpus, parts = needs(compose(ONE_GPU + ["transfer_queue.backend.SimpleStorage.num_data_storage_units=5"]))
        self.assertEqual(gpus, 1)
        # One CPU per storage unit and the controller; the GPU's bundle holds verl's colocation count.
        self.assertEqual(parts["its 5 storage units"], 5)
        self.assertEqual(parts["TransferQueue's controller"], 1)
        self.assertEqual(parts["the GPU workers' bundles"], 3)

    def test_a_cpu_only_two_core_cluster_is_refused_with_what_it_lacks(self):
        said = shortfall(compose(ONE_GPU), {"CPU": 2.0})
        self.assertIsNotNone(said)
        self.assertIn("has 0 GPUs and 2 CPUs", said)
        self.assertIn("needs 1 GPUs", said)

    def test_enough_gpus_but_too_few_cpus_is_refused(self):
        config = compose(["trainer.nnodes=1", "trainer.n_gpus_per_node=8"])
        gpus, parts = needs(config)
        self.assertIsNotNone(shortfall(config, {"GPU": 8.0, "CPU": sum(parts.values()) - 1}))
        self.assertIsNone(shortfall(config, {"GPU": 8.0, "CPU": float(sum(parts.values()))}))

    def test_an_sft_job_holds_the_gpu_bundles_only(self):
        # verl's SFT trainer starts no TransferQueue: its workers' bundles are all it holds.
        config = compose(["trainer.nnodes=1", "trainer.n_gpus_per_node=8"], "sft_trainer_engine")
        gpus, parts = needs(config, sft=True)
        self.assertEqual((gpus, list(parts)), (8, ["the GPU workers' bundles"]))
        self.assertIsNone(shortfall(config, {"GPU": 8.0, "CPU": float(parts["the GPU workers' bundles"])}, sft=True))
        self.assertIn("needs 8 GPUs", shortfall(config, {"GPU": 1.0, "CPU": 64.0}, sft=True))

    def test_an_offloaded_layout_needs_the_host_memory_on_every_node(self):
        # Qwen3-8B offloaded on one H200 (gpu/verl/scale.ts): 122 GiB of state in host memory.
        layout = {"offload": True, "estimate": {"hostOffload": 122}}

        def node(gib, alive=True):
            return {"Alive": alive, "Resources": {"memory": gib * 2**30, "CPU": 16.0}}

        said = host_shortfall(layout, [node(200), node(90)])
        self.assertIsNotNone(said)
        self.assertIn("122 GiB", said)
        self.assertIn("smallest node of the Ray cluster has 90.0 GiB", said)
        # A dead node does not count; a layout without offload needs nothing there.
        self.assertIsNone(host_shortfall(layout, [node(200), node(90, alive=False)]))
        self.assertIsNone(host_shortfall({"offload": False, "estimate": {"hostOffload": 0}}, [node(1)]))
        self.assertIsNone(host_shortfall(None, [node(1)]))


if __name__ == "__main__":
    unittest.main()
