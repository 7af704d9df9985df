{{/*
Labels every object carries: the name, and with helmLabels (the default) the
standard labels of a Helm release: app.kubernetes.io/instance (the release),
app.kubernetes.io/version (the chart's appVersion),
app.kubernetes.io/managed-by (Helm) and helm.sh/chart (name-version).
tools/gen-manifests.py renders manifests/ and dist/install.yaml with
helmLabels=false: they are applied without Helm. commonLabels adds the
user's own. None of these is in a selector (modelservice.selectorLabels):
a selector never changes with the version or the release.
*/}}
{{- define "modelservice.labels" -}}
app.kubernetes.io/name: modelservice-operator
app.kubernetes.io/part-of: modelservice
{{- if or (not (hasKey .Values "helmLabels")) .Values.helmLabels }}
app.kubernetes.io/instance: {{ .Release.Name | quote }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" | quote }}
{{- end }}
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/*
The operator Pods' selector (immutable in the Deployment: never change it,
never add the version, the chart or the release to it: `helm upgrade` from
any earlier chart must keep matching the same Pods).
*/}}
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

{{/*
The namespaces the controller watches, as a JSON list (fromJsonArray reads
it): controller.watchNamespaces, or the one controller.watchNamespace; []
for all namespaces.
*/}}
{{- define "modelservice.watchNamespaces" -}}
{{- if .Values.controller.watchNamespaces }}{{ toJson .Values.controller.watchNamespaces }}
{{- else if .Values.controller.watchNamespace }}{{ toJson (list .Values.controller.watchNamespace) }}
{{- else }}[]{{ end }}
{{- end }}

{{/*
What the controller may do with the namespaced objects it manages: the rules
of its ClusterRole (all namespaces) or of its Role in each watched namespace.
*/}}
{{- define "modelservice.controllerRules" -}}
rules:
  # The custom resource: read and watch it; update/patch for the finalizer
  # modelops.dev/cleanup (added and removed on the main resource).
  - apiGroups: ["modelops.dev"]
    resources: ["modelservices"]
    verbs: ["get", "list", "watch", "update", "patch"]
  # status is written only through the /status subresource.
  - apiGroups: ["modelops.dev"]
    resources: ["modelservices/status"]
    verbs: ["get", "update", "patch"]
  # Needed to set ownerReferences with blockOwnerDeletion: true on owned
  # objects when the OwnerReferencesPermissionEnforcement admission plugin is on.
  - apiGroups: ["modelops.dev"]
    resources: ["modelservices/finalizers"]
    verbs: ["update"]
  # Owned objects.
  - apiGroups: ["apps"]
    resources: ["deployments"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  - apiGroups: [""]
    resources: ["services"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  # The owned Deployments' pods, read only (watched by the managed-by label):
  # what the Deployment's status does not say, e.g. a pod the scheduler
  # cannot place (Unschedulable).
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["get", "list", "watch"]
  # Autoscaling mode HPA: the HorizontalPodAutoscaler it owns (autoscaling/v2).
  - apiGroups: ["autoscaling"]
    resources: ["horizontalpodautoscalers"]
    verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
  # Events, through events.k8s.io/v1 or core/v1.
  - apiGroups: ["events.k8s.io"]
    resources: ["events"]
    verbs: ["create", "patch"]
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
{{- end }}

{{/* Checks that a schema cannot express. */}}
{{- define "modelservice.validate" -}}
{{- if and .Values.controller.watchNamespace .Values.controller.watchNamespaces }}
{{- fail "set controller.watchNamespaces (a list) or controller.watchNamespace (one), not both" }}
{{- end }}
{{- if and (gt (int .Values.replicas) 1) (not .Values.controller.leaderElection.enabled) }}
{{- fail "replicas > 1 needs controller.leaderElection.enabled=true (otherwise every replica's controller writes at once)" }}
{{- end }}
{{- $prom := .Values.controller.prometheus | default dict }}
{{- $basic := $prom.basicAuth | default dict }}
{{- if and $prom.bearerTokenFile (or $basic.username $basic.passwordFile) }}
{{- fail "controller.prometheus: bearerTokenFile and basicAuth are mutually exclusive (both set the Authorization header)" }}
{{- end }}
{{- if ne (empty $basic.username) (empty $basic.passwordFile) }}
{{- fail "controller.prometheus.basicAuth needs both username and passwordFile" }}
{{- end }}
{{- if ne (empty $prom.certFile) (empty $prom.keyFile) }}
{{- fail "controller.prometheus needs both certFile and keyFile (a client certificate and its key)" }}
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

{{/*
The controller's flags of controller.prometheus (how it authenticates to
Prometheus), one per line; nothing when none is set. Header flags are quoted
(a value may hold YAML's special characters); maps range in key order.
*/}}
{{- define "modelservice.prometheusAuthArgs" -}}
{{- $prom := .Values.controller.prometheus | default dict }}
{{- with $prom.bearerTokenFile }}
- --prometheus-bearer-token-file={{ . }}
{{- end }}
{{- with ($prom.basicAuth | default dict) }}
{{- with .username }}
- {{ printf "--prometheus-basic-auth-username=%s" . | quote }}
{{- end }}
{{- with .passwordFile }}
- --prometheus-basic-auth-password-file={{ . }}
{{- end }}
{{- end }}
{{- with $prom.caFile }}
- --prometheus-ca-file={{ . }}
{{- end }}
{{- with $prom.certFile }}
- --prometheus-cert-file={{ . }}
{{- end }}
{{- with $prom.keyFile }}
- --prometheus-key-file={{ . }}
{{- end }}
{{- range $name, $value := $prom.headers }}
- {{ printf "--prometheus-header=%s=%s" $name $value | quote }}
{{- end }}
{{- range $name, $path := $prom.headerFiles }}
- {{ printf "--prometheus-header-file=%s=%s" $name $path | quote }}
{{- end }}
{{- end }}

{{/*
The Pods' securityContext: podSecurityContext, or the restricted default
when the value is absent (`helm upgrade --reuse-values` from a release made
before the value existed renders with that release's values).
*/}}
{{- define "modelservice.podSecurityContext" -}}
{{- if hasKey .Values "podSecurityContext" }}
{{- toYaml .Values.podSecurityContext }}
{{- else -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
fsGroup: 65532
seccompProfile:
  type: RuntimeDefault
{{- end }}
{{- end }}

{{/* Both containers' securityContext: securityContext, or the restricted default when absent (as above). */}}
{{- define "modelservice.securityContext" -}}
{{- if hasKey .Values "securityContext" }}
{{- toYaml .Values.securityContext }}
{{- else -}}
runAsNonRoot: true
runAsUser: 65532
runAsGroup: 65532
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
privileged: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end }}
{{- end }}

{{/*
crds.install and crds.keep, true when absent (a release made before the
values existed, upgraded with --reuse-values, keeps its CRD and keeps it
on uninstall, as Helm did with crds/).
*/}}
{{- define "modelservice.crdsInstall" -}}
{{- $c := .Values.crds | default dict }}
{{- if or (not (hasKey $c "install")) $c.install }}true{{ end }}
{{- end }}
{{- define "modelservice.crdsKeep" -}}
{{- $c := .Values.crds | default dict }}
{{- if or (not (hasKey $c "keep")) $c.keep }}true{{ end }}
{{- end }}

{{/* tests.enabled, true when absent (as crds.install). */}}
{{- define "modelservice.testsEnabled" -}}
{{- $t := .Values.tests | default dict }}
{{- if or (not (hasKey $t "enabled")) $t.enabled }}true{{ end }}
{{- end }}
