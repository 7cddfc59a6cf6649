#!/usr/bin/env bash
# Install the dashboard's requirements into .venv and start it on the bundled default data.
# Extra arguments go to `streamlit run` (e.g. --server.port 8600).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements.txt

port=8501
previous=""
for arg in "$@"; do
  case "$arg" in --server.port=*) port="${arg#*=}" ;; esac
  [ "$previous" = "--server.port" ] && port="$arg"
  previous="$arg"
done

.venv/bin/python -m streamlit run app.py "$@" &
server=$!
trap 'kill "$server" 2>/dev/null' INT TERM
# One run of app.py before the first visitor (imports, numba's compiled kernels, the default data and
# its release, all cached for every session), so a first visit costs what a later one does.
# It waits for the server's health, however long a busy machine takes, and prints "cocoviz is ready".
.venv/bin/python scripts/warm_up.py "$port" || true
wait "$server"
