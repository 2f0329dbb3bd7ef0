{{/* The chart's name. */}}
{{- define "imago.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The release's full name: the release's name when it holds the chart's. */}}
{{- define "imago.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The labels that select the pods. */}}
{{- define "imago.selectorLabels" -}}
app.kubernetes.io/name: {{ include "imago.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Every object's labels. */}}
{{- define "imago.labels" -}}
{{ include "imago.selectorLabels" . }}
app.kubernetes.io/component: server
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Why no object has a namespace of its own: checkov's CKV_K8S_21. */}}
{{- define "imago.skipNamespace" -}}
CKV_K8S_21=The objects go to the release's namespace (helm install -n NAMESPACE).
{{- end -}}

{{- define "imago.configMapName" -}}
{{- printf "%s-config" (include "imago.fullname" .) -}}
{{- end -}}

{{/* The Secret this chart makes. */}}
{{- define "imago.secretName" -}}
{{- printf "%s-secrets" (include "imago.fullname" .) -}}
{{- end -}}

{{/* Where IMAGO_KEY, IMAGO_SALT and IMAGO_THUMBOR_KEY are. */}}
{{- define "imago.keysSecretName" -}}
{{- .Values.keys.existingSecret | default (include "imago.secretName" .) -}}
{{- end -}}

{{/* Where the result store's AWS credentials are. */}}
{{- define "imago.storeSecretName" -}}
{{- .Values.resultStore.existingSecret | default (include "imago.secretName" .) -}}
{{- end -}}

{{/* Whether the Secret this chart makes has anything to hold. */}}
{{- define "imago.makesSecret" -}}
{{- if or (and .Values.keys.key (not .Values.keys.existingSecret)) .Values.thumbor.key (and .Values.resultStore.accessKeyId (not .Values.resultStore.existingSecret)) -}}
true
{{- end -}}
{{- end -}}

{{- define "imago.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "imago.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/* repository:tag, or repository@digest when a digest is given. */}}
{{- define "imago.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}
{{- end -}}

{{/* The cache's emptyDir size: answers + sources + headroom, in MiB. */}}
{{- define "imago.cacheSizeLimit" -}}
{{- $c := .Values.cache -}}
{{- printf "%dMi" (add $c.resultDiskMiB $c.sourceDiskMiB $c.headroomMiB | int) -}}
{{- end -}}
