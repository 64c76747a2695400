#!/usr/bin/env bash
# Installs what scripts/check-helm.sh needs into a machine-level cache and prints two lines:
#   <cache>/helm-v3.22.0/helm                          (built with `go install` from the Go module proxy)
#   <cache>/kubernetes-validate-1.37.0/bin/kubernetes-validate   (a venv, from PyPI; bundles the Kubernetes schemas)
# <cache> is ${AGW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-gateway}, outside the clone, so a
# fresh CI clone finds both again. Nothing is downloaded from GitHub or get.helm.sh: CI machines
# reach only the package registries. A cold helm build takes several minutes on 2 cores (see
# docs/operations/kubernetes.md); .ci/run starts this script in the background early for that reason.
# Progress goes to stderr.
set -euo pipefail
helm_version="v3.22.0"
validate_version="1.37.0"
cache_root="${AGW_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-gateway}"
helm_dir="$cache_root/helm-$helm_version"
venv="$cache_root/kubernetes-validate-$validate_version"
say() { printf '[install-helm-tools] %s\n' "$*" >&2; }
trap 'exit 1' TERM INT   # so that the EXIT traps below clean up a half-made install

helm_ok() { [ -x "$helm_dir/helm" ] && "$helm_dir/helm" version --short 2>/dev/null | grep -q "^$helm_version"; }
validate_ok() { [ -x "$venv/bin/kubernetes-validate" ] && [ "$("$venv/bin/kubernetes-validate" --version 2>/dev/null)" = "$validate_version" ]; }

mkdir -p "$cache_root"
# One installer at a time (two CI runs, or CI's background start and a hand run).
exec 9>"$cache_root/.helm-tools.lock"
flock 9

if ! helm_ok; then
  command -v go >/dev/null 2>&1 || { say "go is required to build helm (apt-get install golang, or https://go.dev/dl)"; exit 1; }
  staging="$(mktemp -d "$cache_root/.helm-staging.XXXXXX")"
  trap 'rm -rf "$staging"' EXIT
  say "building helm $helm_version with go install helm.sh/helm/v3/cmd/helm@$helm_version (minutes on a cold Go cache)"
  started=$(date +%s)
  # Stamped as helm's Makefile does: its version, and the Kubernetes version of its client-go
  # (v0.37 → 1.37) as the default for --kube-version and lint's deprecation checks (unstamped: 1.20).
  ldflags="-s -w -X helm.sh/helm/v3/internal/version.version=$helm_version"
  for pkg in pkg/lint/rules pkg/chartutil; do
    ldflags="$ldflags -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=37"
  done
  GOBIN="$staging" go install -ldflags "$ldflags" "helm.sh/helm/v3/cmd/helm@$helm_version" >&2
  say "helm built in $(( $(date +%s) - started )) s"
  rm -rf "$helm_dir"
  mkdir -p "$helm_dir"
  mv "$staging/helm" "$helm_dir/helm"
  rm -rf "$staging"
  trap - EXIT
  helm_ok || { say "the helm built does not report $helm_version: $("$helm_dir/helm" version --short 2>&1)"; exit 1; }
fi

if ! validate_ok; then
  say "installing kubernetes-validate $validate_version from PyPI into $venv"
  rm -rf "$venv"
  trap 'rm -rf "$venv"' EXIT
  python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$validate_version" >&2
  trap - EXIT
  validate_ok || { say "kubernetes-validate did not install"; exit 1; }
fi

printf '%s\n%s\n' "$helm_dir/helm" "$venv/bin/kubernetes-validate"
