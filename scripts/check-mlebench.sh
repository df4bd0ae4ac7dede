#!/usr/bin/env bash
# Checks mlepipe's MLE-bench grading against a real MLE-bench checkout:
#   scripts/check-mlebench.sh CHECKOUT
# 1. every lite grader of the checkout imports with the grading Python
#    (PYTHON, default the agent environment);
# 2. synthetic prepared data in the real layouts of four lite competitions
#    (scripts/check_mlebench.py says which and why) and leaderboards in
#    Kaggle's columns, in a scratch copy of the checkout's package;
# 3. our mlebench and eval stages on them (scripted agents), then MLE-bench's
#    own grade_csv and aggregate_reports on each kept submission, every field
#    compared with our reports.
# It prints the counts and exits 1 on any import failure or mismatch. The
# checkout is only read; MLE-bench's reference side needs its own few extra
# packages (appdirs, diskcache, tenacity), installed into the scratch folder
# when the grading Python lacks them. Needs the built CLI (npm run build).
source "$(dirname "$0")/check-common.sh" mlebench "$@"

"$PY" scripts/check_mlebench.py imports "$CHECKOUT" || imports_failed=1

mkdir -p "$WORK/mle/experiments"
cp -r "$CHECKOUT/mlebench" "$WORK/mle/mlebench"
cp -r "$CHECKOUT/experiments/splits" "$WORK/mle/experiments/splits"
"$PY" scripts/check_mlebench.py data "$WORK/mle" "$WORK/data"

cat > "$WORK/check.yaml" <<YAML
name: check-mlebench
stages:
  comps:
    uses: mlebench
    with:
      data: data
      mlebench: mle
      set: [spooky-author-identification, detecting-insults-in-social-commentary, new-york-city-taxi-fare-prediction, tabular-playground-series-may-2022]
  agents:
    uses: eval
    needs: [comps]
    with: { policies: [scripted:forest, scripted:majority, scripted:random], max_turns: 5, step_timeout: 300, seed: 1 }
YAML
printf 'cache: .mlepipe\nsandbox: { backend: process }\n' > "$WORK/mlepipe.config.yaml"
(cd "$WORK" && node "$ROOT/dist/cli.js" run check.yaml)
OUT=$(cd "$WORK" && node "$ROOT/dist/cli.js" outputs check.yaml agents)

# MLE-bench's grading imports a few packages our graders never need.
if ! "$PY" -c 'import appdirs, diskcache, tenacity' 2>/dev/null; then
  "$PY" -m pip install --quiet --disable-pip-version-check --target "$WORK/ref" appdirs==1.4.4 diskcache==5.6.3 tenacity==9.2.1
  export PYTHONPATH="$WORK/ref${PYTHONPATH:+:$PYTHONPATH}"
fi
(cd "$WORK" && "$PY" "$ROOT/scripts/check_mlebench.py" compare "$WORK/mle" "$WORK/data" "$OUT")
[ -z "${imports_failed:-}" ]
