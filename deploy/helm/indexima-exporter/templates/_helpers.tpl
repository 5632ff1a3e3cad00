{{/* Chart name, shortened to the 63 characters a label value allows. */}}
{{- define "indexima-exporter.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release-chart, or the release alone when it already contains the chart name. */}}
{{- define "indexima-exporter.fullname" -}}
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

{{- define "indexima-exporter.selectorLabels" -}}
app.kubernetes.io/name: {{ include "indexima-exporter.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "indexima-exporter.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "indexima-exporter.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/component: exporter
{{- end }}

{{- define "indexima-exporter.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "indexima-exporter.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The Secret holding the console password, or "" when there is none. */}}
{{- define "indexima-exporter.secretName" -}}
{{- if .Values.console.existingSecret }}
{{- .Values.console.existingSecret }}
{{- else if .Values.console.password }}
{{- printf "%s-console" (include "indexima-exporter.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "indexima-exporter.secretDir" -}}/etc/indexima_exporter/secret{{- end }}
{{- define "indexima-exporter.configDir" -}}/etc/indexima_exporter/config{{- end }}

{{/* indexima.yml: values.config verbatim, or built from console and nodes. */}}
{{- define "indexima-exporter.config" -}}
{{- if .Values.config }}
{{- .Values.config }}
{{- else }}
{{- $console := dict "url" (required "console.url is required" .Values.console.url) }}
{{- with .Values.console.username }}{{ $_ := set $console "username" . }}{{ end }}
{{- if (include "indexima-exporter.secretName" .) }}
{{- $_ := set $console "password_file" (printf "%s/%s" (include "indexima-exporter.secretDir" .) .Values.console.existingSecretKey) }}
{{- end }}
{{- with .Values.console.timeout }}{{ $_ := set $console "timeout" . }}{{ end }}
{{- with .Values.console.tlsConfig }}{{ $_ := set $console "tls_config" . }}{{ end }}
{{- $nodes := required "nodes: list at least one node (host, port, name)" .Values.nodes }}
{{- toYaml (dict "console" $console "nodes" $nodes) }}
{{- end }}
{{- end }}

{{/* The claim holding the state file, or "" when the state file is on an emptyDir or off. */}}
{{- define "indexima-exporter.stateClaim" -}}
{{- $p := .Values.eventsStateFile.persistence }}
{{- if $p.enabled }}
{{- if not .Values.eventsStateFile.enabled }}
{{- fail "eventsStateFile.persistence.enabled needs eventsStateFile.enabled: true" }}
{{- end }}
{{- if gt (int .Values.replicaCount) 1 }}
{{- fail "eventsStateFile.persistence.enabled needs replicaCount: 1 (one claim, one pod; and two exporters polling the same nodes would count every event twice)" }}
{{- end }}
{{- default (printf "%s-state" (include "indexima-exporter.fullname" .) | trunc 63 | trimSuffix "-") $p.existingClaim }}
{{- end }}
{{- end }}
