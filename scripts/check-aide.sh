#!/usr/bin/env bash
# Checks mlepipe's AIDE (preset aideml) against WecoAI/aideml's own Agent:
#   [AIRA_DOJO=CHECKOUT] scripts/check-aide.sh CHECKOUT
# The same scenario (scripts/check_aide.py: 20 steps of scripted replies and reviews, and the random draws
# the search makes) goes through aideml's real Agent, journal, interpreter, data preview and reply parsing,
# with its LLM backend and random module fed from the scenario, and through mlepipe's aide scaffold in the
# process sandbox. Every node's decision (operator, parent, buggy, metric), the best node and what each side
# consumed are compared, and the journal mlepipe writes in aideml's format is read back with aideml's own
# loader. aideml's agent loop needs a few packages beyond the agent environment (humanize, dataclasses-json,
# black, genson, omegaconf, shutup): they are installed into a scratch venv over it. Exits 1 on a mismatch.
source "$(dirname "$0")/check-common.sh" aide "$@"

"$PY" -m venv --system-site-packages "$WORK/venv"
"$WORK/venv/bin/pip" install -q humanize dataclasses-json black genson omegaconf shutup
VPY=$WORK/venv/bin/python

"$VPY" scripts/check_aide.py scenario "$WORK/scenario.json"
"$VPY" scripts/check_aide.py task "$WORK/task"
mkdir -p "$WORK/aideml/input"
cp "$WORK/task/public/"* "$WORK/aideml/input/"
"$VPY" scripts/check_aide.py aideml "$CHECKOUT" "$WORK/scenario.json" "$WORK/aideml" >"$WORK/aideml.jsonl"
node --import "$ROOT/test/ts/register.mjs" scripts/check_aide_mlepipe.ts \
  "$WORK/scenario.json" "$WORK/task" "$PY" "$WORK/mlepipe-journal.json" >"$WORK/mlepipe.jsonl"
"$VPY" scripts/check_aide.py compare "$WORK/mlepipe.jsonl" "$WORK/aideml.jsonl" \
  "$WORK/mlepipe-journal.json" "$CHECKOUT"

# aira-dojo's greedy search (preset aira-greedy), when AIRA_DOJO names a checkout of facebookresearch/aira-dojo:
# mlepipe's node outcomes replayed through aira-dojo's own search policy, Journal and Node with the same draws.
if [ -n "${AIRA_DOJO:-}" ]; then
  "$VPY" scripts/check_aide.py aira-scenario "$WORK/aira.json"
  node --import "$ROOT/test/ts/register.mjs" scripts/check_aide_mlepipe.ts \
    "$WORK/aira.json" "$WORK/task" "$PY" "$WORK/aira-journal.json" >"$WORK/aira-mlepipe.jsonl"
  "$VPY" scripts/check_aide.py airadojo "$AIRA_DOJO" "$WORK/aira.json" "$WORK/aira-mlepipe.jsonl" >"$WORK/aira-dojo.jsonl"
  "$VPY" scripts/check_aide.py compare "$WORK/aira-mlepipe.jsonl" "$WORK/aira-dojo.jsonl"
fi
