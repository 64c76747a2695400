#!/usr/bin/env bash
# Checks the Helm chart deploy/helm/agent-gateway without a cluster (.ci/run runs it; so can you):
#   1. helm lint --strict, with the required values and with everything turned on;
#   2. helm template with the chart's defaults alone: must refuse, naming the first missing value;
#   3. helm template with the defaults + only the required values (ci/required-values.yaml), and
#      with every optional part on (ci/all-on-values.yaml); each must render the expected objects;
#   4. every rendered manifest validated by kubernetes-validate --strict (unknown fields rejected,
#      which a misspelt Pod proves first) against the oldest and the newest Kubernetes schemas it
#      bundles (1.25, 1.37); a manifest whose kind or apiVersion has no schema fails too (the tool
#      itself only warns);
#   5. the derived values (grace periods, RUN_SLOTS) and the refusal of bad `config` keys.
# Tools come from scripts/install-helm-tools.sh (machine cache); HELM=… and KUBERNETES_VALIDATE=…
# use others. The rendered files are kept for reading in .tools/helm-check/ (HELM_CHECK_OUT=… elsewhere).
set -euo pipefail
cd "$(dirname "$0")/.."
chart=deploy/helm/agent-gateway
out="${HELM_CHECK_OUT:-.tools/helm-check}"
say() { printf '[check-helm] %s\n' "$*"; }
die() { printf '[check-helm] FAILED: %s\n' "$*" >&2; exit 1; }

if [ -z "${HELM:-}" ] || [ -z "${KUBERNETES_VALIDATE:-}" ]; then
  { read -r helm_path; read -r validate_path; } < <(bash scripts/install-helm-tools.sh) || die "could not install helm and kubernetes-validate (scripts/install-helm-tools.sh)"
  HELM="${HELM:-$helm_path}"
  KUBERNETES_VALIDATE="${KUBERNETES_VALIDATE:-$validate_path}"
fi
say "$("$HELM" version --short), kubernetes-validate $("$KUBERNETES_VALIDATE" --version)"
mkdir -p "$out" && rm -f "$out"/*.yaml "$out"/*.log "$out"/*.err

say "helm lint --strict"
"$HELM" lint --strict "$chart" -f "$chart/ci/required-values.yaml" || die "helm lint (required values)"
"$HELM" lint --strict "$chart" -f "$chart/ci/all-on-values.yaml" || die "helm lint (everything on)"

say "helm template with the defaults alone must refuse"
if "$HELM" template gw "$chart" >"$out/defaults.yaml" 2>"$out/defaults.err"; then
  die "the defaults alone rendered; publicBaseUrl, temporal.address and the secrets should be required"
fi
grep -q "publicBaseUrl is required" "$out/defaults.err" || { cat "$out/defaults.err" >&2; die "the defaults alone failed, but not on the missing publicBaseUrl"; }
say "refused as expected: $(grep -o 'publicBaseUrl is required[^"]*' "$out/defaults.err" | head -n 1)"

# render <name> <expected kinds, sorted, one per line> <helm args…>
render() {
  local name="$1" expected="$2"; shift 2
  "$HELM" template gw "$chart" --namespace gateway "$@" >"$out/$name.yaml" || die "helm template ($name)"
  local kinds
  kinds="$(grep -E '^kind: ' "$out/$name.yaml" | sed 's/^kind: //' | sort | tr '\n' ' ' | sed 's/ $//')"
  [ "$kinds" = "$expected" ] || die "helm template ($name) rendered [$kinds], expected [$expected]"
  say "$name: $(grep -c '^kind: ' "$out/$name.yaml") objects: $kinds"
  for version in 1.25.0 1.37.0; do
    "$KUBERNETES_VALIDATE" --strict --quiet -k "$version" "$out/$name.yaml" >"$out/$name.$version.log" 2>&1 \
      || { cat "$out/$name.$version.log" >&2; die "kubernetes-validate --strict -k $version ($name)"; }
    # A kind it has no schema for is only a warning there: not here.
    if grep -q . "$out/$name.$version.log"; then cat "$out/$name.$version.log" >&2; die "kubernetes-validate -k $version ($name) warned"; fi
  done
  say "$name: valid against Kubernetes 1.25 and 1.37 (strict)"
}

# The validator itself: strict mode must reject an unknown field (a misspelt one here).
cat >"$out/misspelt.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata:
  name: misspelt
spec:
  terminationGracePeriodSecnds: 30
  containers:
    - name: c
      image: busybox
EOF
if "$KUBERNETES_VALIDATE" --strict --quiet "$out/misspelt.yaml" >"$out/misspelt.log" 2>&1; then
  die "kubernetes-validate --strict accepted an unknown field; the checks below would prove nothing"
fi
grep -q "terminationGracePeriodSecnds" "$out/misspelt.log" || { cat "$out/misspelt.log" >&2; die "kubernetes-validate failed the misspelt Pod for another reason"; }
say "kubernetes-validate --strict rejects an unknown field, as it should"

render required "ConfigMap Deployment Deployment Job PodDisruptionBudget PodDisruptionBudget Secret Secret Service ServiceAccount" \
  -f "$chart/ci/required-values.yaml"
render all-on "ConfigMap Deployment Deployment HorizontalPodAutoscaler HorizontalPodAutoscaler Ingress Job PodDisruptionBudget PodDisruptionBudget Service ServiceAccount" \
  -f "$chart/ci/all-on-values.yaml"

# What the chart derives (docs/operations/kubernetes.md): the grace periods and the run slots.
grace() { awk -v d="$2" '/^kind: / { kind = $2 } kind == "Deployment" && $0 ~ "^  name: gw-agent-gateway-" d "$" { f = 1 } f && /terminationGracePeriodSeconds:/ { print $2; exit }' "$out/$1.yaml"; }
expect() { [ "$2" = "$3" ] || die "$1: got '$2', expected '$3'"; say "$1 = $2"; }
expect "API grace, defaults (5 s preStop + 10 s drain + 15 s)" "$(grace required api)" 30
expect "worker grace, defaults (max(10 s, 15 s outbound) + 15 s)" "$(grace required worker)" 30
expect "API grace, all-on (5 + 25 + 15)" "$(grace all-on api)" 45
expect "worker grace, all-on (max(10, 20) + 15)" "$(grace all-on worker)" 35
expect "RUN_SLOTS, defaults (3 × 2 workers)" "$(grep -A1 'name: RUN_SLOTS' "$out/required.yaml" | sed -n 's/.*value: "\(.*\)"/\1/p')" 6
expect "RUN_SLOTS, all-on (4 × 6, the autoscaler's maximum)" "$(grep -A1 'name: RUN_SLOTS' "$out/all-on.yaml" | sed -n 's/.*value: "\(.*\)"/\1/p')" 24

say "a variable the chart sets itself is refused in config"
if "$HELM" template gw "$chart" -f "$chart/ci/required-values.yaml" --set config.DATABASE_URL=postgres://x >/dev/null 2>"$out/managed.err"; then
  die "config.DATABASE_URL was accepted"
fi
grep -q "config.DATABASE_URL is set by the chart" "$out/managed.err" || { cat "$out/managed.err" >&2; die "config.DATABASE_URL refused for the wrong reason"; }
say "a misspelt variable is refused by values.schema.json"
if "$HELM" template gw "$chart" -f "$chart/ci/required-values.yaml" --set config.LOG_LEVLE=debug >/dev/null 2>"$out/typo.err"; then
  die "config.LOG_LEVLE was accepted"
fi
grep -q "LOG_LEVLE" "$out/typo.err" || { cat "$out/typo.err" >&2; die "config.LOG_LEVLE refused for the wrong reason"; }
say "chart ok"
