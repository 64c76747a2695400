#!/usr/bin/env bash
# Installs the LiteLLM proxy (PyPI litellm[proxy], pinned) into .tools/litellm-venv for
# `npm run bench:chat`. Idempotent: does nothing when the pinned version is already there.
# 1.100.5: releases from 1.106 on need certifi >= 2026.10.19, which the registry mirror here lacks.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION="${LITELLM_VERSION:-1.100.5}"
VENV=".tools/litellm-venv"
if [ -x "$VENV/bin/litellm" ] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('litellm') != '$VERSION')" 2>/dev/null; then
  exit 0
fi
PY="${PYTHON:-python3}"
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
"$VENV/bin/python" -m pip install --quiet "litellm[proxy]==$VERSION"
"$VENV/bin/litellm" --version >/dev/null 2>&1 || true
