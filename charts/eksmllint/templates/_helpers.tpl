{{- define "eksmllint.fullname" -}}
{{- if contains "eksmllint" .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-eksmllint" .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "eksmllint.selectorLabels" -}}
app.kubernetes.io/name: eksmllint
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: webhook
{{- end -}}

{{- define "eksmllint.labels" -}}
{{ include "eksmllint.selectorLabels" . }}
app.kubernetes.io/part-of: eksmllint
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "eksmllint.tlsSecret" -}}
{{- .Values.tls.secretName | default (printf "%s-tls" (include "eksmllint.fullname" .)) -}}
{{- end -}}

{{- define "eksmllint.generated" -}}
{{- .Files.Get "files/generated.yaml" | fromYaml | toJson -}}
{{- end -}}

{{/* One webhook entry: .root (the chart context), .hookName, .path, .operations. */}}
{{- define "eksmllint.hook" -}}
{{- $ := .root -}}
{{- $operations := .operations -}}
- name: {{ .hookName }}
  admissionReviewVersions: ["v1"]
  sideEffects: None
  timeoutSeconds: {{ $.Values.webhook.timeoutSeconds }}
  failurePolicy: {{ $.Values.webhook.failurePolicy }}
  matchPolicy: Equivalent
  {{- if eq .hookName "mutate.eksmllint.io" }}
  reinvocationPolicy: IfNeeded
  {{- end }}
  namespaceSelector:
    matchExpressions:
      - key: kubernetes.io/metadata.name
        operator: NotIn
        values: {{ concat (list $.Release.Namespace "kube-system" "cert-manager") $.Values.webhook.excludeNamespaces | uniq | toJson }}
      - key: eksmllint.io/webhook
        operator: NotIn
        values: ["disabled"]
  clientConfig:
    service:
      namespace: {{ $.Release.Namespace }}
      name: {{ include "eksmllint.fullname" $ }}
      path: {{ .path }}
      port: 443
    {{- if not $.Values.tls.certManager.enabled }}
    caBundle: {{ $.Values.tls.caBundle }}
    {{- end }}
  rules:
    {{- range (include "eksmllint.generated" $ | fromJson).webhookResources }}
    - apiGroups: {{ toJson .apiGroups }}
      apiVersions: {{ toJson .apiVersions }}
      resources: {{ toJson .resources }}
      operations: {{ toJson $operations }}
      scope: "*"
    {{- end }}
{{- end }}
