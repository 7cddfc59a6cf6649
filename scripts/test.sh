#!/usr/bin/env bash
# Install everything the tests need into .venv (and Debian's Chromium for the real-browser test),
# start a throw-away PostgreSQL for the database tests (scripts/postgres.sh), then check lint and
# format with ruff, build the documentation site strictly (a broken link or reference fails it) and run
# every test, doctests included, warnings as errors, on two workers (pytest-xdist).
# Idempotent: safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -r requirements-dev.txt
if ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ]; then apt_get="apt-get"; else apt_get="sudo apt-get"; fi
  $apt_get update -qq && DEBIAN_FRONTEND=noninteractive $apt_get install -y -qq chromium >/dev/null
fi
.venv/bin/ruff check .
.venv/bin/ruff format --check .
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir "$(mktemp -d)"
# Not exec: the EXIT trap of scripts/postgres.sh stops the server and removes its folder after pytest.
source scripts/postgres.sh
.venv/bin/python -m pytest -n 2 --dist worksteal "$@"
