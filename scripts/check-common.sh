# The opening of every scripts/check-*.sh comparison against a reference checkout, sourced with the check's
# name and the script's arguments: strict mode, the repository as the working folder (ROOT), the checkout
# named by the first argument as an absolute path (CHECKOUT), the Python that runs both sides (PY: PYTHON,
# else the agent environment) and a fresh scratch folder (WORK).
NAME=$1
shift
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
CHECKOUT=$(cd "${1:?usage: scripts/check-$NAME.sh CHECKOUT}" && pwd)
PY=${PYTHON:-$ROOT/.venv/agent/bin/python}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/mlepipe-check-$NAME-XXXXXX")
echo "check-$NAME: scratch folder $WORK"
