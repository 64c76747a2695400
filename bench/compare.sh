#!/usr/bin/env bash
# bench/compare.sh <base-ref> <head-ref>: before/after figures for a change, from one run.
#
# Checks both refs out into temporary git worktrees (dependencies from `npm ci`, or a symlink to
# this checkout's node_modules when package-lock.json is the same), and runs this checkout's
# `npm run bench:chat` with both gateways side by side: the same mock, the same PostgreSQL, the
# same load, cell after cell, so machine noise hits both alike. Each build is compiled and
# migrated by its own code. A comparison is not one build's latest figures: the result is added to
# bench/history/chat.md as "## Chat (before/after: <base> → <head>)" (BENCH_COMPARISON), and
# BENCHMARKS.md is left as it is.
#
# COMPARE_UPSTREAM=1 also runs `npm run bench:upstream` (the upstream HTTP client alone: CPU per
# call of each build, in one process; bench/history/upstream-client.md, "## Upstream client (before/after: …)");
# COMPARE_CHAT=0 skips the chat run.
# COMPARE_WEBHOOKS=1 also runs `npm run bench:webhooks` against each build in turn (bench/history/webhooks.md,
# "## Webhooks (before: <base>)" and "## Webhooks (after: <head>)"); those two runs are
# sequential, so compare them only on an idle machine.
# BENCH_* variables pass through (default here: BENCH_TARGETS=gw-b,gw-oa,portkey-b,
# BENCH_PHASES=latency); e.g. BENCH_TARGETS=gw-b,gw-b-cont,gw-b-toolrt for continued threads and
# a tools round trip before/after (the targets tables judge the head build).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: bench/compare.sh <base-ref> <head-ref>" >&2
  exit 2
fi
base_ref=$1
head_ref=$2
repo=$(git rev-parse --show-toplevel)
cd "$repo"
base_sha=$(git rev-parse --short "$base_ref^{commit}")
head_sha=$(git rev-parse --short "$head_ref^{commit}")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/agw-compare-XXXXXX")

cleanup() {
  for d in base head; do
    [ -d "$tmp/$d" ] && git worktree remove --force "$tmp/$d" >/dev/null 2>&1 || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# Dependencies of a ref whose package-lock.json differs from this checkout's are installed once
# per lock file into .tools/bench-deps/<hash of the lock> and reused by later comparisons.
checkout() { # <dir> <ref>
  git worktree add --detach "$tmp/$1" "$2" >/dev/null
  if cmp -s "$tmp/$1/package-lock.json" "$repo/package-lock.json"; then
    ln -s "$repo/node_modules" "$tmp/$1/node_modules"
    return
  fi
  local cache="$repo/.tools/bench-deps/$(sha256sum "$tmp/$1/package-lock.json" | cut -c1-16)"
  if [ ! -d "$cache/node_modules" ]; then
    echo "[compare] $2: dependencies differ from this checkout; npm ci into $cache" >&2
    (cd "$tmp/$1" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    mkdir -p "$cache"
    mv "$tmp/$1/node_modules" "$cache/node_modules"
  fi
  ln -s "$cache/node_modules" "$tmp/$1/node_modules"
}
checkout base "$base_ref"
checkout head "$head_ref"

# The COMPARE_* switches are part of the command a section names (BENCH_* variables are added by the scripts).
compare_vars=$(env | grep -E '^COMPARE_[A-Z]+=' | sort | tr '\n' ' ' || true)
export BENCH_COMMAND="${compare_vars}bench/compare.sh $base_ref $head_ref"
export BENCH_TARGETS="${BENCH_TARGETS:-gw-b,gw-oa,portkey-b}"
export BENCH_PHASES="${BENCH_PHASES:-latency}"
if [ "${COMPARE_CHAT:-1}" = "1" ]; then
  BENCH_GATEWAYS="before=$tmp/base,after=$tmp/head" BENCH_COMPARISON="before/after: $base_ref ($base_sha) → $head_ref ($head_sha)" \
    npm run -s bench:chat
fi

if [ "${COMPARE_UPSTREAM:-0}" = "1" ]; then
  BENCH_GATEWAYS="before=$tmp/base,after=$tmp/head" BENCH_COMPARISON="before/after: $base_ref ($base_sha) → $head_ref ($head_sha)" \
    npm run -s bench:upstream
fi

if [ "${COMPARE_WEBHOOKS:-0}" = "1" ]; then
  BENCH_GATEWAY_ROOT="$tmp/base" BENCH_COMPARISON="before: $base_ref ($base_sha)" npm run -s bench:webhooks
  BENCH_GATEWAY_ROOT="$tmp/head" BENCH_COMPARISON="after: $head_ref ($head_sha)" npm run -s bench:webhooks
fi
