"""mlepipe's ReAct scaffold as a verl agent loop, and its reward function.

Written into every verl export (gpu/verl/export.ts copies this folder), so a
Ray job imports it from its working directory. Nothing here imports verl at
module level except agent_loop.py, so the scaffold, the sandbox client and the
reward function also run without verl (tests, debugging).
"""
