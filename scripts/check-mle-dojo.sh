#!/usr/bin/env bash
# Runs MLE-Dojo's own MLE-Agent and AIDE through mlepipe's harness stage and compares what MLE-Dojo recorded
# with what mlepipe reports:
#   scripts/check-mle-dojo.sh MLE_DOJO_CHECKOUT MLEBENCH_CHECKOUT SANDMLE_CHECKOUT
# 1. a scratch environment (Python 3.11) with what MLE-Dojo's main.py, its two agents and its graders import,
#    not MLE-Dojo's requirements.txt: that names torch==2.5.1 (a CUDA build) and some sixty packages its agents'
#    code might use, none of which the scripted policy's code needs (PYTHON names a ready one instead);
# 2. synthetic Kaggle downloads of spooky-author-identification and detecting-insults-in-social-commentary,
#    split by MLE-Dojo's own prepare() (python/mledojo_driver.py layout);
# 3. MLE-bench's layout of the same two competitions (scripts/check_mlebench.py data) for the mlebench node the
#    harness stage takes its competition list from;
# 4. a scripted OpenAI-compatible policy (scripts/check_mledojo.py serve) and the harness stage with MLE-Dojo's
#    mleagent and aide solvers, the overlay's settings read from the SandMLE checkout, fewer steps;
# 5. every run's grade in the node's results.jsonl against MLE-Dojo's env history (its best raw and position
#    scores). It prints the counts and exits 1 on any difference. MLE-Agent counts tokens with tiktoken, which
#    downloads its table unless TIKTOKEN_CACHE_DIR holds it: the table is taken from the litellm wheel, which
#    ships it. Needs the built CLI (npm run build).
source "$(dirname "$0")/check-common.sh" mle-dojo "$@"
MLEBENCH=$(cd "${2:?usage: scripts/check-mle-dojo.sh MLE_DOJO MLEBENCH SANDMLE}" && pwd)
OVERLAY=$(cd "${3:?usage: scripts/check-mle-dojo.sh MLE_DOJO MLEBENCH SANDMLE}/scaffolds/mle-dojo" && pwd)
COMPS=(spooky-author-identification detecting-insults-in-social-commentary)

if [ -z "${PYTHON:-}" ]; then
  BASE=${BASE_PYTHON:-$(command -v python3.11 || echo /root/.pyenv/versions/3.12.1/bin/python)}
  "$BASE" -m venv "$WORK/venv"
  PY=$WORK/venv/bin/python
  "$PY" -m pip install --quiet --disable-pip-version-check anthropic==0.49.0 coolname==2.2.0 dataclasses_json==0.6.7 \
    genson==1.3.0 gymnasium==1.0.0 humanize==4.12.2 numpy==2.2.4 omegaconf==2.3.0 openai==1.74.0 pandas==2.2.3 \
    psutil==6.1.0 pydantic==2.11.3 python_igraph==0.11.8 PyYAML==6.0.2 rich==14.0.0 scikit_learn==1.6.1 \
    scipy==1.15.2 shutup==0.2.0 tiktoken==0.7.0 tqdm==4.66.4 py7zr==0.22.0 black==25.1.0 python-dotenv google-genai \
    openai-agents==0.0.11
fi
if [ -z "${TIKTOKEN_CACHE_DIR:-}" ]; then
  "$PY" -m pip download --quiet --disable-pip-version-check --no-deps litellm -d "$WORK/wheels"
  export TIKTOKEN_CACHE_DIR=$WORK/tiktoken
  (cd "$WORK/wheels" && "$PY" -m zipfile -e litellm-*.whl unpacked)
  mkdir -p "$TIKTOKEN_CACHE_DIR"
  cp "$WORK/wheels/unpacked/litellm/litellm_core_utils/tokenizers/9b5ad71b2ce5302211f9c61530b329a4922fc6a4" \
    "$TIKTOKEN_CACHE_DIR/"
fi

"$PY" scripts/check_mledojo.py raw "$WORK/raw"
for c in "${COMPS[@]}"; do
  "$PY" python/mledojo_driver.py layout --checkout "$CHECKOUT" --dest "$WORK/dojo" --competition "$c" \
    --raw "$WORK/raw/$c" 2>>"$WORK/prepare.log"
done
mkdir -p "$WORK/mle/experiments"
cp -r "$MLEBENCH/mlebench" "$WORK/mle/mlebench"
cp -r "$MLEBENCH/experiments/splits" "$WORK/mle/experiments/splits"
"$PY" scripts/check_mlebench.py data "$WORK/mle" "$WORK/data"

"$PY" scripts/check_mledojo.py serve "$WORK/port" "$WORK/policy.log" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null' EXIT
for _ in $(seq 50); do [ -s "$WORK/port" ] && break; sleep 0.2; done
PORT=$(cat "$WORK/port")

# One harness node: name, solver, its smaller step setting.
harness_node() {
  cat <<YAML
  $1:
    uses: harness
    needs: [comps]
    with:
      harness: mle-dojo
      checkout: $CHECKOUT
      overlay: $OVERLAY
      python: $PY
      data: dojo
      solver: $2
      policies: [scripted]
      settings: { $3 }
      time_per_run_s: 900
YAML
}
{
  cat <<YAML
name: check-mle-dojo
models:
  scripted: { provider: openai, base_url: "http://127.0.0.1:$PORT/v1", model: qwen3_30b_serve_finetuned_step_60 }
stages:
  comps:
    uses: mlebench
    with: { data: data, mlebench: mle, set: [${COMPS[0]}, ${COMPS[1]}] }
YAML
  harness_node mleagent mleagent 'max_steps: 6'
  harness_node aide aide 'steps: 4'
} > "$WORK/check.yaml"
printf 'cache: .mlepipe\nsandbox: { backend: process }\n' > "$WORK/mlepipe.config.yaml"
(cd "$WORK" && node "$ROOT/dist/cli.js" run check.yaml)
for node in mleagent aide; do
  OUT=$(cd "$WORK" && node "$ROOT/dist/cli.js" outputs check.yaml "$node")
  "$PY" scripts/check_mledojo.py compare "$OUT"
done
