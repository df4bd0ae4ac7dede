"""The trainer worker: a causal LM policy (model), the policy-gradient loss on
exact token batches (loss), one optimiser step with micro-batching (update),
sampling with per-token log-probabilities (generate), and the HTTP service
around one policy in memory (server, state, chat, batch, checkpoint, protocol;
started by `python -m mlepipe_worker serve`)."""
