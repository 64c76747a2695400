{{/* Names and labels. */}}
{{- define "agw.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "agw.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "agw.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/name: {{ include "agw.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: agent-gateway
{{- end }}

{{/* Selector labels of one component: (dict "ctx" $ "component" "api") */}}
{{- define "agw.selectorLabels" -}}
app.kubernetes.io/name: {{ include "agw.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "agw.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "agw.secretName" -}}
{{- default (include "agw.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "agw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "agw.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Checks that stop a render with a message naming the value, before anything reaches the cluster
(the processes would otherwise crash-loop on the same problem).
*/}}
{{- define "agw.validate" -}}
{{- if not .Values.publicBaseUrl }}
{{- fail "publicBaseUrl is required: the https URL clients use (PUBLIC_BASE_URL)" }}
{{- end }}
{{- if not (hasPrefix "https://" .Values.publicBaseUrl) }}
{{- fail "publicBaseUrl must be an https:// URL (NODE_ENV=production refuses anything else)" }}
{{- end }}
{{- if not .Values.temporal.address }}
{{- fail "temporal.address is required: the Temporal frontend's host:port (TEMPORAL_ADDRESS)" }}
{{- end }}
{{- if not .Values.secrets.existingSecret }}
{{- range $key := list "operatorToken" "secretEncryptionKey" "databaseUrl" }}
{{- if not (index $.Values.secrets $key) }}
{{- fail (printf "secrets.%s is required (or name a Secret you manage in secrets.existingSecret)" $key) }}
{{- end }}
{{- end }}
{{- end }}
{{- $managed := list "NODE_ENV" "PORT" "HOST" "DATA_DIR" "DATABASE_URL" "DATABASE_POOL_SIZE" "TEMPORAL_ADDRESS" "TEMPORAL_NAMESPACE" "TEMPORAL_TASK_QUEUE" "OPERATOR_TOKEN" "SECRET_ENCRYPTION_KEY" "PUBLIC_BASE_URL" "PROVIDER_A_API_KEY" "PROVIDER_B_API_KEY" "SHUTDOWN_DRAIN_MS" "SANDBOX_POOL_SIZE" "RUN_SLOTS" "WORKER_METRICS_PORT" "OTEL_SERVICE_NAME" }}
{{- range $name, $_ := .Values.config }}
{{- if has $name $managed }}
{{- fail (printf "config.%s is set by the chart: use its own value (see values.yaml and docs/operations/kubernetes.md)" $name) }}
{{- end }}
{{- end }}
{{- range $component := list "api" "worker" }}
{{- range $name, $_ := (index $.Values $component).env }}
{{- if and (has $name $managed) (ne $name "OTEL_SERVICE_NAME") }}
{{- fail (printf "%s.env.%s is set by the chart: use its own value (see values.yaml and docs/operations/kubernetes.md)" $component $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/* API grace: preStop sleep + the drain (SHUTDOWN_DRAIN_MS, rounded up) + settling. */}}
{{- define "agw.api.terminationGracePeriodSeconds" -}}
{{- if .Values.api.terminationGracePeriodSeconds }}
{{- .Values.api.terminationGracePeriodSeconds }}
{{- else }}
{{- add (int .Values.api.preStopSleepSeconds) (div (add (int64 .Values.api.shutdownDrainMs) 999) 1000) (int .Values.api.shutdownSettleSeconds) }}
{{- end }}
{{- end }}

{{/* Worker grace: the longer of the runs' WORKER_SHUTDOWN_GRACE_MS (10 s) and an outbound attempt (OUTBOUND_TIMEOUT_MS), + settling. */}}
{{- define "agw.worker.terminationGracePeriodSeconds" -}}
{{- if .Values.worker.terminationGracePeriodSeconds }}
{{- .Values.worker.terminationGracePeriodSeconds }}
{{- else }}
{{- $outbound := div (add (int64 (default "15000" (index .Values.config "OUTBOUND_TIMEOUT_MS"))) 999) 1000 }}
{{- $runs := div (add (int64 (default "10000" (index .Values.config "WORKER_SHUTDOWN_GRACE_MS"))) 999) 1000 }}
{{- add (max $runs $outbound) (int .Values.worker.shutdownSettleSeconds) }}
{{- end }}
{{- end }}

{{- define "agw.worker.runSlots" -}}
{{- if .Values.worker.runSlots }}
{{- .Values.worker.runSlots }}
{{- else if .Values.worker.autoscaling.enabled }}
{{- mul (int .Values.worker.sandboxPoolSize) (int .Values.worker.autoscaling.maxReplicas) }}
{{- else }}
{{- mul (int .Values.worker.sandboxPoolSize) (int .Values.worker.replicas) }}
{{- end }}
{{- end }}

{{/* A value from the Secret: (dict "ctx" $ "key" "operatorToken" "optional" false) */}}
{{- define "agw.secretEnv" -}}
valueFrom:
  secretKeyRef:
    name: {{ include "agw.secretName" .ctx }}
    key: {{ index .ctx.Values.secrets.keys .key }}
    {{- if .optional }}
    optional: true
    {{- end }}
{{- end }}

{{/* Environment shared by the API and the worker (after envFrom: the ConfigMap). */}}
{{- define "agw.commonEnv" -}}
- name: NODE_ENV
  value: production
- name: DATABASE_URL
  {{- include "agw.secretEnv" (dict "ctx" . "key" "databaseUrl") | nindent 2 }}
- name: DATABASE_POOL_SIZE
  value: {{ .Values.database.poolSize | quote }}
- name: TEMPORAL_ADDRESS
  value: {{ .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: PUBLIC_BASE_URL
  value: {{ .Values.publicBaseUrl | quote }}
- name: OPERATOR_TOKEN
  {{- include "agw.secretEnv" (dict "ctx" . "key" "operatorToken") | nindent 2 }}
- name: SECRET_ENCRYPTION_KEY
  {{- include "agw.secretEnv" (dict "ctx" . "key" "secretEncryptionKey") | nindent 2 }}
- name: PROVIDER_A_API_KEY
  {{- include "agw.secretEnv" (dict "ctx" . "key" "providerAApiKey" "optional" true) | nindent 2 }}
- name: PROVIDER_B_API_KEY
  {{- include "agw.secretEnv" (dict "ctx" . "key" "providerBApiKey" "optional" true) | nindent 2 }}
{{- end }}

{{/* Pod-level settings shared by both Deployments. */}}
{{- define "agw.podCommon" -}}
serviceAccountName: {{ include "agw.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.automountServiceAccountToken }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{- define "agw.volumes" -}}
volumes:
  - name: tmp
    emptyDir: {}
  {{- with .Values.extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{- define "agw.volumeMounts" -}}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  {{- with .Values.extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}

{{/* Scheduling of one component: (dict "v" .Values.api) */}}
{{- define "agw.scheduling" -}}
{{- with .v.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .v.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .v.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .v.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}
