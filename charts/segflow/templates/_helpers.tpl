{{- define "segflow.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "segflow.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: operator
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "segflow.selector" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "segflow.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "segflow.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The permissions the operator needs, and no more: its own resources, the pods,
services and config maps it creates for them, and events. */}}
{{- define "segflow.rules" -}}
- apiGroups: [segflow.io]
  resources: [streamjobs]
  verbs: [get, list, watch, patch, update]
- apiGroups: [segflow.io]
  resources: [streamjobs/status]
  verbs: [get, patch, update]
- apiGroups: [segflow.io]
  resources: [streamjobs/finalizers]
  verbs: [update]
- apiGroups: [""]
  resources: [pods]
  verbs: [get, list, watch, create, delete]
# patch: a redeploy updates the job's description and the Services' ports.
- apiGroups: [""]
  resources: [services, configmaps]
  verbs: [get, list, watch, create, patch]
# Each deployment revision's certificates and each job's state key (see job_tls.py).
- apiGroups: [""]
  resources: [secrets]
  verbs: [get, create, delete]
- apiGroups: [networking.k8s.io]
  resources: [networkpolicies]
  verbs: [get, create]
- apiGroups: [""]
  resources: [events]
  verbs: [create, patch]
{{- end -}}
