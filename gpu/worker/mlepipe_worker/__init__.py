"""The trainer worker's core: a causal LM policy (model), the policy-gradient
loss on exact token batches (loss), one optimiser step with micro-batching
(update) and sampling with per-token log-probabilities (generate)."""
