#!/usr/bin/env bash
# Creates .venv/trainer, the trainer worker's Python environment; see
# scripts/setup-python.sh, which sets up every project environment.
exec bash "$(dirname "$0")/setup-python.sh" trainer
