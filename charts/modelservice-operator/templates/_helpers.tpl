{{/*
Labels every object carries. No Helm-specific labels: the same templates
render manifests/ and dist/install.yaml (tools/gen-manifests.py), which are
applied without Helm. commonLabels adds the user's own.
*/}}
{{- define "modelservice.labels" -}}
app.kubernetes.io/name: modelservice-operator
app.kubernetes.io/part-of: modelservice
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* The operator Pods' selector (immutable in the Deployment: never change it). */}}
{{- define "modelservice.selectorLabels" -}}
app.kubernetes.io/name: modelservice-operator
app.kubernetes.io/component: operator
{{- end }}

{{/* The image both containers run: repository@digest, else repository:tag (default appVersion). */}}
{{- define "modelservice.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{/* The Secret holding the webhook's serving certificate (tls.crt, tls.key). */}}
{{- define "modelservice.certSecretName" -}}
{{ .Values.certificates.secretName }}
{{- end }}

{{/*
The caBundle of both webhook configurations in mode "provided": the value is
the CA's PEM (base64-encoded here) or already base64 (as gen-certs.sh prints it).
*/}}
{{- define "modelservice.caBundle" -}}
{{- $ca := .Values.certificates.provided.caBundle | trim -}}
{{- if hasPrefix "-----BEGIN" $ca -}}
{{ printf "%s\n" $ca | b64enc }}
{{- else -}}
{{ $ca }}
{{- end -}}
{{- end }}

{{/* Annotations of both webhook configurations. */}}
{{- define "modelservice.webhookAnnotations" -}}
{{- if eq .Values.certificates.mode "cert-manager" -}}
annotations:
  # cert-manager's cainjector writes the CA of this Certificate into caBundle
  # and keeps it there.
  cert-manager.io/inject-ca-from: {{ .Release.Namespace }}/modelservice-webhook
{{- end }}
{{- end }}

{{/* clientConfig.caBundle where the chart knows it (mode "provided"). */}}
{{- define "modelservice.webhookCABundle" -}}
{{- if eq .Values.certificates.mode "provided" -}}
caBundle: {{ include "modelservice.caBundle" . }}
{{- end }}
{{- end }}

{{/*
matchConditions of both webhook configurations: validation ratcheting, as the
API server ratchets a CRD's schema (unchanged values only). An UPDATE of a
ModelService that leaves spec as it was (a finalizer removed, labels or
annotations edited) is not sent to the webhook: the controller's finalizer
removal and metadata edits never depend on the webhook running (failurePolicy
Fail) nor on rules tightened after the object was stored. A changed spec is
sent, also while the object is being deleted (the chaos soak stored an
invalid spec through a not-being-deleted condition). The webhook allows the same
requests unchecked when they reach it (an API server without matchConditions).
CREATE has no oldObject: the operation is tested first (CEL's || absorbs the
error of the other side).
*/}}
{{- define "modelservice.webhookMatchConditions" -}}
matchConditions:
  - name: spec-changed
    expression: >-
      request.operation != 'UPDATE' || !has(object.spec) || !has(oldObject.spec) || object.spec != oldObject.spec
{{- end }}

{{/* Checks that a schema cannot express. */}}
{{- define "modelservice.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.controller.leaderElection.enabled) }}
{{- fail "replicas > 1 needs controller.leaderElection.enabled=true (otherwise every replica's controller writes at once)" }}
{{- end }}
{{- if and (eq .Values.certificates.mode "provided") (not .Values.certificates.provided.caBundle) }}
{{- fail "certificates.mode=provided needs certificates.provided.caBundle: the PEM (or base64 PEM) of the CA that signed the serving certificate in Secret certificates.secretName (e.g. --set-file certificates.provided.caBundle=ca.crt)" }}
{{- end }}
{{- end }}

{{/*
The webhook's --shutdown-delay in seconds: webhook.shutdownDelaySeconds, or
10 when the value is absent (`helm upgrade --reuse-values` from a release
made before the value existed renders with that release's values, not this
chart's defaults; 0 is kept).
*/}}
{{- define "modelservice.webhookShutdownDelaySeconds" -}}
{{- if hasKey .Values.webhook "shutdownDelaySeconds" }}{{ int .Values.webhook.shutdownDelaySeconds }}{{ else }}10{{ end }}
{{- end }}
