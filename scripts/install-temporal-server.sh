#!/usr/bin/env bash
# Installs the Temporal server (v1.32.2, built from the Go module proxy) and its SQL tool, with the
# PostgreSQL schema files they need, into a machine-level cache, and prints three lines on stdout:
#   <dir>/bin/server
#   <dir>/bin/sql
#   <dir>/schema/postgresql/v12        (temporal/ and visibility/, each with versioned/)
# The cache lives outside the clone (a fresh CI clone finds it again):
#   ${AGW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-gateway}/temporal-server-v1.32.2
# Order: that cache; else binaries already built into ./.tools/temporal-server/bin (copied in);
# else `go install` (≈ 8 min on 2 cores with a cold Go cache; Go ≥ 1.26.10 is fetched through
# GOTOOLCHAIN). The schema comes from the module in the Go module cache. Progress goes to stderr.
set -euo pipefail
version="v1.32.2"
toolchain="go1.26.10"
module="go.temporal.io/server"
root="$(cd "$(dirname "$0")/.." && pwd)"
cache_root="${AGW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-gateway}"
dir="$cache_root/temporal-server-$version"
say() { printf '[install-temporal-server] %s\n' "$*" >&2; }

complete() {
  [ -x "$dir/bin/server" ] && [ -x "$dir/bin/sql" ] &&
    [ -d "$dir/schema/postgresql/v12/temporal/versioned" ] && [ -d "$dir/schema/postgresql/v12/visibility/versioned" ]
}
print() { printf '%s\n%s\n%s\n' "$dir/bin/server" "$dir/bin/sql" "$dir/schema/postgresql/v12"; }

if complete; then print; exit 0; fi

mkdir -p "$cache_root"
# One installer at a time (two CI runs or a test and a launcher may ask at once).
exec 9>"$cache_root/.temporal-server.lock"
flock 9
if complete; then print; exit 0; fi

command -v go >/dev/null 2>&1 || { say "go is required to build the Temporal server (apt-get install golang, or https://go.dev/dl)"; exit 1; }
staging="$(mktemp -d "$cache_root/.staging.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bin"

local_bin="$root/.tools/temporal-server/bin"
if [ -x "$local_bin/server" ] && [ -x "$local_bin/sql" ] && "$local_bin/server" --version 2>/dev/null | grep "${version#v}" >/dev/null; then
  say "copying the binaries built in $local_bin into $dir"
  cp "$local_bin/server" "$local_bin/sql" "$staging/bin/"
else
  say "building the Temporal server $version and temporal-sql-tool with go install (several minutes on a cold cache)"
  GOTOOLCHAIN="$toolchain" GOBIN="$staging/bin" go install "$module/cmd/server@$version" "$module/cmd/tools/sql@$version" >&2
fi

# The schema files ship in the module source; `go mod download` is a no-op when it is cached.
moddir="$(GOTOOLCHAIN="$toolchain" GOFLAGS=-mod=mod go mod download -json "$module@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p')"
[ -d "$moddir/schema/postgresql/v12" ] || { say "the module source has no schema/postgresql/v12 (looked in '$moddir')"; exit 1; }
mkdir -p "$staging/schema/postgresql"
cp -R "$moddir/schema/postgresql/v12" "$staging/schema/postgresql/"
chmod -R u+w "$staging/schema"   # the module cache is read-only

rm -rf "$dir"
mv "$staging" "$dir"
trap - EXIT
say "installed into $dir"
print
