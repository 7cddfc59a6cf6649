#!/usr/bin/env bash
# Install the dashboard's requirements into .venv and start it on the bundled default data.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements.txt
exec .venv/bin/python -m streamlit run app.py "$@"
