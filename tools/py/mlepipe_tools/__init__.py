"""Diagnostic tools that run inside the agent's sandbox (see docs/tools.md)."""
