#!/usr/bin/env bash
# Runs the real aira-dojo through mlepipe's harness stage and compares what it recorded with what mlepipe reports:
#   scripts/check-aira-dojo.sh AIRA_DOJO_CHECKOUT MLEBENCH_CHECKOUT [SANDMLE_CHECKOUT]
# 1. a scratch environment for aira-dojo (VENV, default WORK/venv; reused when VENV names one that exists):
#    Python 3.11 with a CPU-only torch from a local wheel (TORCH_WHEEL, for Python 3.11; aira-dojo imports torch
#    only to record its version and look for GPUs; a CUDA build is never installed, and the check stops if one
#    is there), aira-dojo's requirements.txt without its developer tools, and MLE-bench's grading packages;
# 2. synthetic prepared data for two small lite competitions (scripts/check_mlebench.py's), MLE-bench's package
#    in a scratch copy with those leaderboards, the same copy in aira-dojo's environment and in our grader's;
# 3. a scripted OpenAI-compatible server as the policy (scripts/check_aira_dojo.py serve);
# 4. an mlebench stage and a harness stage running aira-dojo's aide_greedy (SOLVER names another; the SandMLE
#    overlay's settings when its checkout is given, else aira-dojo's own) for STEPS steps on each competition;
# 5. check_aira_dojo.py compare: each run's journal against mlepipe's record (steps, the best node, its test
#    score as aira-dojo graded it against mlepipe's grade of the final submission).
# The checkouts are only read (aira-dojo must be a git clone: its runs record the commit). Needs the built CLI.
source "$(dirname "$0")/check-common.sh" aira-dojo "$@"
MLEBENCH=$(cd "${2:?usage: scripts/check-aira-dojo.sh AIRA_DOJO MLEBENCH [SANDMLE]}" && pwd)
SANDMLE=${3:+$(cd "$3" && pwd)}
VENV=${VENV:-$WORK/venv}
PY311=${PY311:-/root/.pyenv/versions/3.11.7/bin/python}
TORCH_WHEEL=${TORCH_WHEEL:-$(ls /opt/wheels/torch-*+cpu-cp311-*.whl 2>/dev/null | head -1)}
COMPETITIONS="tabular-playground-series-may-2022 new-york-city-taxi-fare-prediction"

if [ ! -x "$VENV/bin/python" ]; then
  [ -n "$TORCH_WHEEL" ] || { echo "check-aira-dojo: no CPU torch wheel (TORCH_WHEEL)"; exit 1; }
  "$PY311" -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "$TORCH_WHEEL"
  # aira-dojo's requirements.txt as pinned, less its developer tools (tests, linters, notebooks' editor), which
  # main_run never imports; then what its modules import beyond the file.
  grep -vE '^(jupyterlab|pre-commit|pur|pytest|pandas-stubs|types-psutil|torchfix|line-profiler)' \
    "$CHECKOUT/requirements.txt" > "$WORK/requirements.txt"
  "$VENV/bin/pip" install --quiet -r "$WORK/requirements.txt" python-dotenv black shutup psutil ipython
  # MLE-bench's grading imports these; its tensorflow and the rest serve competitions this check does not run.
  "$VENV/bin/pip" install --quiet appdirs diskcache tenacity pyyaml py7zr levenshtein pillow
fi
if "$VENV/bin/pip" list 2>/dev/null | grep -qi '^nvidia-'; then echo "check-aira-dojo: a CUDA package is installed in $VENV"; exit 1; fi

mkdir -p "$WORK/mle/experiments"
cp -r "$MLEBENCH/mlebench" "$WORK/mle/mlebench"
cp -r "$MLEBENCH/experiments/splits" "$WORK/mle/experiments/splits"
"$PY" scripts/check_mlebench.py data "$WORK/mle" "$WORK/data"
# aira-dojo grades each step with the same scratch copy of MLE-bench (and its synthetic leaderboards).
echo "$WORK/mle" > "$("$VENV/bin/python" -c 'import site; print(site.getsitepackages()[0])')/mlebench-check.pth"

"$PY" scripts/check_aira_dojo.py serve "$WORK/port" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")

cat > "$WORK/check.yaml" <<YAML
name: check-aira-dojo
models:
  policy: { provider: openai, base_url: "http://127.0.0.1:$PORT/v1", model: scripted-policy }
stages:
  comps:
    uses: mlebench
    with: { data: data, mlebench: mle, set: [$(echo $COMPETITIONS | sed 's/ /, /')] }
  dojo:
    uses: harness
    needs: [comps]
    with:
      harness: aira-dojo
      checkout: $CHECKOUT
${SANDMLE:+      overlay: $SANDMLE/scaffolds/aira-dojo}
      python: $VENV/bin/python
      solver: ${SOLVER:-aide_greedy}
      policies: [policy]
      time_per_run_s: ${TIME_PER_RUN:-1800}
      settings: { step_limit: ${STEPS:-3}, execution_timeout: 600 }
YAML
printf 'cache: .mlepipe\nsandbox: { backend: process }\n' > "$WORK/mlepipe.config.yaml"
(cd "$WORK" && node "$ROOT/dist/cli.js" run check.yaml)
OUT=$(cd "$WORK" && node "$ROOT/dist/cli.js" outputs check.yaml dojo)
"$PY" scripts/check_aira_dojo.py compare "$OUT"
