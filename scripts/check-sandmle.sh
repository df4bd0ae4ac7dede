#!/usr/bin/env bash
# Runs SandMLE's released agent code and mlepipe on the same scripted replies and compares them:
#   scripts/check-sandmle.sh CHECKOUT        (CHECKOUT: the released SandMLE repository, only read)
# 1. the scenarios' competitions in the release's layout (scripts/sandmle_scenarios.py);
# 2. mlepipe: `mlepipe task import-sandmle` on them, then an eval node over all and a grpo node a scenario,
#    in the release's format, limits, reward and timeout rule, their policy a scripted server that replays
#    each scenario's replies (it also answers as a trainer worker, so that grpo runs its rollouts and hands
#    over its batch with the masks);
# 3. the release: its MultiTurnReactAgent, tools and DeepResearchWorkflow reward on the same replies, its Python
#    executions going through submit_script_to_srun_api to its own srun_api.py served here, with a `srun`
#    that runs the command it is given directly and a conda `activate` that only puts the agent Python first
#    on PATH; the rollout engine returns the scripted replies, and the heavy __init__ files of rllm's packages
#    are skipped so that only the modules the three files import load, from the checkout as they are
#    (scripts/sandmle_release.py lists what is loaded and what is replaced);
# 4. trajectory by trajectory: reward, format rate, each tool response, ending, timeouts, masks
#    (scripts/check_sandmle.py lists the normalisations). It prints the counts and each mismatch, and
#    exits 1 on any.
# Not covered: ScoreTool (MLE-bench's grade-sample), which the released evaluation uses on MLE-bench's own
# competitions; training, which this follows, grades with SynScoreTool.
# The reference side needs json5, httpx, fastapi and uvicorn: installed into the scratch folder when the
# agent Python (PYTHON) lacks them. Needs the built CLI (npm run build).
source "$(dirname "$0")/check-common.sh" sandmle "$@"
DRIVER=$ROOT/scripts/check_sandmle.py
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { for _ in $(seq 100); do [ -s "$1" ] && return 0; sleep 0.2; done; echo "check-sandmle: $2 did not start" >&2; exit 1; }

"$PY" "$DRIVER" tasks "$WORK/syn"

# mlepipe's side.
mkdir -p "$WORK/mlepipe"
printf 'cache: .mlepipe\nsandbox: { backend: process }\n' > "$WORK/mlepipe/mlepipe.config.yaml"
(cd "$WORK/mlepipe" && node "$ROOT/dist/cli.js" task import-sandmle "$WORK/syn" tasks)
"$PY" "$DRIVER" serve "$WORK/replay.port" "$WORK/replay.jsonl" 2>"$WORK/replay.log" &
PIDS+=($!)
wait_for "$WORK/replay.port" "the scripted server"
URL="http://127.0.0.1:$(cat "$WORK/replay.port")/v1"
IDS=$("$PY" -c 'import sys; sys.path.insert(0, "scripts"); from sandmle_scenarios import scenarios; print(*scenarios())')
T=$("$PY" -c 'import sys; sys.path.insert(0, "scripts"); from sandmle_scenarios import STEP_TIMEOUT; print(STEP_TIMEOUT)')
RELEASE="prompt_format: sandmle-release, limits: release, reward: sandmle-release, step_timeout: $T"
cat > "$WORK/mlepipe/check.yaml" <<YAML
name: check-sandmle
models:
  eval-replay: { provider: openai, base_url: "$URL", model: eval-replay }
  grpo-replay: { provider: openai, base_url: "$URL", model: grpo-replay }
stages:
  replay:
    uses: eval
    with: { policy: eval-replay, tasks: tasks, $RELEASE }
YAML
# One grpo node a scenario, on a folder of that task alone: a node that fails loses only its own trajectory.
for id in $IDS; do
  mkdir -p "$WORK/mlepipe/one/$id" && cp -r "$WORK/mlepipe/tasks/$id" "$WORK/mlepipe/one/$id/"
  cat >> "$WORK/mlepipe/check.yaml" <<YAML
  grpo-$id:
    uses: grpo
    with: { policy: grpo-replay, trainer: worker, tasks: one/$id, split: all, steps: 1, batch_size: 1, group_size: 1, eval_every: 0, timeout_rule: release, $RELEASE }
YAML
done
(cd "$WORK/mlepipe" && node "$ROOT/dist/cli.js" run --keep-going check.yaml) || echo "check-sandmle: some mlepipe nodes failed; their trajectories count as mismatches"
outputs() { (cd "$WORK/mlepipe" && node "$ROOT/dist/cli.js" outputs check.yaml "$1" 2>/dev/null) || true; }
EVAL_OUT=$(outputs replay)
for id in $IDS; do printf '%s\t%s\n' "$id" "$(outputs "grpo-$id")"; done > "$WORK/grpo-outputs.tsv"

# The release's side.
if ! "$PY" -c 'import json5, httpx, fastapi, uvicorn' 2>/dev/null; then
  "$PY" -m pip install --quiet --disable-pip-version-check --target "$WORK/ref" \
    json5==0.17.3 httpx==0.29.0 fastapi==0.165.0 uvicorn==0.55.0 >"$WORK/pip.log" 2>&1 || { cat "$WORK/pip.log"; exit 1; }
  export PYTHONPATH="$WORK/ref${PYTHONPATH:+:$PYTHONPATH}"
fi
mkdir -p "$WORK/bin" "$WORK/conda/bin"
# srun's options are the cluster's business; the command after them (bash -lc ...) runs here.
printf '#!/usr/bin/env bash\nwhile [ "$#" -gt 0 ] && [ "$1" != bash ]; do shift; done\nexec "$@"\n' > "$WORK/bin/srun"
chmod +x "$WORK/bin/srun"
# Sourced inside the login shell, after /etc/profile has reset PATH: the agent Python first, conda a no-op.
printf 'export PATH=%q:"$PATH"\nconda() { :; }\n' "$(dirname "$PY")" > "$WORK/conda/bin/activate"
SRUN_PORT=$(free_port)
(cd "$CHECKOUT/examples/deepresearch" && PATH="$WORK/bin:$PATH" CONDA_BASE="$WORK/conda" exec \
  "$PY" -m uvicorn srun_api:app --host 127.0.0.1 --port "$SRUN_PORT" --log-level warning) 2>"$WORK/srun_api.log" &
PIDS+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$SRUN_PORT/docs" >/dev/null && break; sleep 0.2; done
mkdir -p "$WORK/release-runs"
(cd "$WORK" && PATH="$(dirname "$PY"):$PATH" SRUN_API_URL="http://127.0.0.1:$SRUN_PORT" \
  SANDMLE_SYN_DATA_ROOT="$WORK/syn" DEEPRESEARCH_OUTPUT_DIR="$WORK/release-runs" \
  "$PY" "$DRIVER" release "$CHECKOUT" "$WORK/syn" "$WORK/release.json" "$WORK/release.log")

"$PY" "$DRIVER" compare "$WORK/release.json" "$EVAL_OUT" "$WORK/grpo-outputs.tsv" "$WORK/replay.jsonl"
