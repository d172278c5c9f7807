{{/*
Chart name, truncated to the 63 characters of a DNS label.
*/}}
{{- define "loopgate.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Fully qualified app name. If the release name contains the chart name it is used as is.
*/}}
{{- define "loopgate.fullname" -}}
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

{{- define "loopgate.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels.
*/}}
{{- define "loopgate.labels" -}}
helm.sh/chart: {{ include "loopgate.chart" . }}
{{ include "loopgate.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: loopgate
{{- end }}

{{/*
Selector labels (immutable on the Deployment: do not change).
*/}}
{{- define "loopgate.selectorLabels" -}}
app.kubernetes.io/name: {{ include "loopgate.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Image reference.
*/}}
{{- define "loopgate.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag | toString) }}
{{- end }}

{{/*
Service account of the Deployment.
*/}}
{{- define "loopgate.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "loopgate.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
Service account of the migration Job: hooks run before the chart's own resources exist,
so it never uses the account the chart creates.
*/}}
{{- define "loopgate.migrationServiceAccountName" -}}
{{- if .Values.migrations.serviceAccountName }}
{{- .Values.migrations.serviceAccountName }}
{{- else if and (not .Values.serviceAccount.create) .Values.serviceAccount.name }}
{{- .Values.serviceAccount.name }}
{{- else }}
{{- "default" }}
{{- end }}
{{- end }}

{{/*
Name of the Secret holding LOOPGATE_ADMIN_TOKEN, LOOPGATE_CREDENTIAL_KEY,
LOOPGATE_TOKEN_SIGNING_KEY, DATABASE_URL and REDIS_URL.
*/}}
{{- define "loopgate.secretName" -}}
{{- if .Values.existingSecret }}
{{- .Values.existingSecret }}
{{- else }}
{{- include "loopgate.fullname" . }}
{{- end }}
{{- end }}

{{/*
Fails rendering when the chart is to create the Secret but a required value is missing
or malformed (the same checks loopgate makes at startup).
*/}}
{{- define "loopgate.validateSecrets" -}}
{{- if not .Values.existingSecret }}
{{- $s := .Values.secrets | default dict }}
{{- $missing := list }}
{{- range $key := list "LOOPGATE_ADMIN_TOKEN" "LOOPGATE_CREDENTIAL_KEY" "LOOPGATE_TOKEN_SIGNING_KEY" "DATABASE_URL" }}
{{- if not (get $s $key) }}
{{- $missing = append $missing $key }}
{{- end }}
{{- end }}
{{- if $missing }}
{{- fail (printf "loopgate: set existingSecret, or secrets.%s" (join ", secrets." $missing)) }}
{{- end }}
{{- if lt (len (toString (get $s "LOOPGATE_ADMIN_TOKEN"))) 16 }}
{{- fail "loopgate: secrets.LOOPGATE_ADMIN_TOKEN must be at least 16 characters" }}
{{- end }}
{{- if lt (len (toString (get $s "LOOPGATE_TOKEN_SIGNING_KEY"))) 32 }}
{{- fail "loopgate: secrets.LOOPGATE_TOKEN_SIGNING_KEY must be at least 32 bytes" }}
{{- end }}
{{- if ne (len (b64dec (trim (toString (get $s "LOOPGATE_CREDENTIAL_KEY"))))) 32 }}
{{- fail "loopgate: secrets.LOOPGATE_CREDENTIAL_KEY must be base64 of exactly 32 bytes" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Pod-level settings shared by the Deployment and the migration Job.
*/}}
{{- define "loopgate.podCommon" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
enableServiceLinks: false
{{- with .Values.podSecurityContext }}
securityContext:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/*
The replica count quotas are divided by when Redis is unreachable: config.replicas, else
the most replicas that may run (autoscaling's maxReplicas, or replicaCount).
*/}}
{{- define "loopgate.replicas" -}}
{{- if .Values.config.replicas -}}
{{- .Values.config.replicas -}}
{{- else if .Values.autoscaling.enabled -}}
{{- .Values.autoscaling.maxReplicas -}}
{{- else -}}
{{- .Values.replicaCount -}}
{{- end -}}
{{- end }}
