#!/usr/bin/env bash
# Installs the Node peers of the benchmarks (the Portkey gateway, measured beside this one, and the
# autocannon load generator), pinned, into .tools/bench-node, so a user's `npm install` of the
# gateway does not fetch them (and their install scripts). Run by bench/lib/node-peers.ts on
# first use. Idempotent: does nothing when the pinned versions are already there.
# Portkey's @hono/node-server is pinned to 1.13.8 (bench/lib/peers.ts says why).
set -euo pipefail
cd "$(dirname "$0")/.."
PORTKEY="${PORTKEY_VERSION:-1.15.2}"
AUTOCANNON="${AUTOCANNON_VERSION:-9.0.0}"
DIR=".tools/bench-node"
have() { node -e "process.exit(require('./$DIR/node_modules/$1/package.json').version === '$2' ? 0 : 1)" 2>/dev/null; }
if have "@portkey-ai/gateway" "$PORTKEY" && have autocannon "$AUTOCANNON"; then
  exit 0
fi
mkdir -p "$DIR"
cat > "$DIR/package.json" <<JSON
{
  "name": "agent-gateway-bench-peers",
  "private": true,
  "dependencies": { "@portkey-ai/gateway": "$PORTKEY", "autocannon": "$AUTOCANNON" },
  "overrides": { "@portkey-ai/gateway": { "@hono/node-server": "1.13.8" } }
}
JSON
npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error
