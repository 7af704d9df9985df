#include "test/support/objects.h"

namespace ms::test {

using nlohmann::json;

namespace {

constexpr const char* kCreated = "2023-11-14T22:13:20Z";

json Stored(json written, const std::string& uid, const std::string& rv) {
  json& meta = written["metadata"];
  meta["uid"] = uid;
  meta["resourceVersion"] = rv;
  meta["generation"] = 1;
  meta["creationTimestamp"] = kCreated;
  return written;
}

}  // namespace

ModelServiceBuilder::ModelServiceBuilder()
    : ObjectBuilder(json{
          {"apiVersion", "modelops.dev/v1"},
          {"kind", "ModelService"},
          {"metadata",
           {{"name", "bert"}, {"namespace", "ml"}, {"uid", "uid-1"}, {"resourceVersion", "100"}, {"generation", 1}}},
          {"spec", {{"model", "bert-base"}, {"replicas", 2}}}}) {}

ModelServiceBuilder& ModelServiceBuilder::Spec(const json& fields) {
  object_["spec"].merge_patch(fields);
  return *this;
}

ModelServiceBuilder& ModelServiceBuilder::WholeSpec(const json& spec) {
  object_["spec"] = spec;
  return *this;
}

ModelServiceBuilder& ModelServiceBuilder::Version(const std::string& version, const std::string& image) {
  return Spec({{"version", version}, {"image", image}});
}

ModelServiceBuilder& ModelServiceBuilder::Defaulted() {
  return Spec(
      {{"port", 8080},
       {"gpus", 0},
       {"strategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", "25%"}, {"maxUnavailable", 0}}}}}});
}

ModelServiceBuilder& ModelServiceBuilder::Autoscaling(const std::string& mode, int64_t min, int64_t max,
                                                      int64_t target_queue_length) {
  return Spec(
      {{"autoscaling",
        {{"mode", mode}, {"minReplicas", min}, {"maxReplicas", max}, {"targetQueueLength", target_queue_length}}}});
}

ModelServiceBuilder& ModelServiceBuilder::Finalizer() {
  object_["metadata"]["finalizers"] = json::array({"modelops.dev/cleanup"});
  return *this;
}

DeploymentBuilder::DeploymentBuilder(json written) : ObjectBuilder(Stored(std::move(written), "dep-uid", "2001")) {}

DeploymentBuilder& DeploymentBuilder::Rollout(int replicas, int updated, int ready) {
  const json generation = object_["metadata"]["generation"];
  object_["status"] = {
      {"observedGeneration", generation},
      {"replicas", replicas},
      {"updatedReplicas", updated},
      {"readyReplicas", ready},
      {"availableReplicas", ready},
      {"conditions",
       json::array(
           {{{"type", "Progressing"}, {"status", "True"}, {"reason", "NewReplicaSetAvailable"}, {"message", "ok"}}})}};
  return *this;
}

DeploymentBuilder& DeploymentBuilder::ProgressDeadlineExceeded(const std::string& message) {
  if (!object_["status"].is_object()) Rollout(0, 0, 0);
  object_["status"]["conditions"] = json::array(
      {{{"type", "Progressing"}, {"status", "False"}, {"reason", "ProgressDeadlineExceeded"}, {"message", message}}});
  return *this;
}

DeploymentBuilder::DeploymentBuilder(Served, json served) : ObjectBuilder(std::move(served)) {}

DeploymentBuilder ServedDeployment() {
  return DeploymentBuilder(DeploymentBuilder::Served{}, json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {
      "name": "bert", "namespace": "ml", "uid": "dep-uid", "resourceVersion": "2001", "generation": 1,
      "creationTimestamp": "2023-11-14T22:13:20Z",
      "annotations": {"deployment.kubernetes.io/revision": "1"},
      "labels": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/managed-by": "modelservice-controller",
                 "app.kubernetes.io/name": "modelservice"},
      "ownerReferences": [{"apiVersion": "modelops.dev/v1", "blockOwnerDeletion": true, "controller": true,
                           "kind": "ModelService", "name": "bert", "uid": "uid-1"}],
      "managedFields": [{"manager": "modelservice-controller", "operation": "Update", "apiVersion": "apps/v1",
                         "time": "2023-11-14T22:13:20Z", "fieldsType": "FieldsV1", "fieldsV1": {}}]
    },
    "spec": {
      "replicas": 2, "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
      "selector": {"matchLabels": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/name": "modelservice"}},
      "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 0}},
      "template": {
        "metadata": {"creationTimestamp": null,
                     "labels": {"app.kubernetes.io/instance": "bert",
                                "app.kubernetes.io/managed-by": "modelservice-controller",
                                "app.kubernetes.io/name": "modelservice"}},
        "spec": {
          "containers": [{
            "name": "model", "image": "registry.local/serve:1.4", "imagePullPolicy": "IfNotPresent",
            "env": [{"name": "MODEL_NAME", "value": "bert-base"}, {"name": "MODEL_VERSION", "value": "3"}],
            "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            "readinessProbe": {"failureThreshold": 3, "httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                               "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1},
            "resources": {"limits": {"nvidia.com/gpu": "1"}},
            "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"
          }],
          "dnsPolicy": "ClusterFirst", "restartPolicy": "Always", "schedulerName": "default-scheduler",
          "securityContext": {}, "terminationGracePeriodSeconds": 30
        }
      }
    },
    "status": {
      "availableReplicas": 2, "observedGeneration": 1, "readyReplicas": 2, "replicas": 2, "updatedReplicas": 2,
      "conditions": [
        {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "message": "ok",
         "lastTransitionTime": "2023-11-14T22:13:30Z", "lastUpdateTime": "2023-11-14T22:13:30Z"},
        {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "message": "ok",
         "lastTransitionTime": "2023-11-14T22:13:20Z", "lastUpdateTime": "2023-11-14T22:13:30Z"}]
    }
  })"));
}

ServiceBuilder::ServiceBuilder(json written) : ObjectBuilder(Stored(std::move(written), "svc-uid", "2002")) {}

ServiceBuilder::ServiceBuilder(Served, json served) : ObjectBuilder(std::move(served)) {}

ServiceBuilder ServedService() {
  return ServiceBuilder(ServiceBuilder::Served{}, json::parse(R"({
    "apiVersion": "v1", "kind": "Service",
    "metadata": {
      "name": "bert", "namespace": "ml", "uid": "svc-uid", "resourceVersion": "2002",
      "creationTimestamp": "2023-11-14T22:13:20Z",
      "labels": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/managed-by": "modelservice-controller",
                 "app.kubernetes.io/name": "modelservice"},
      "ownerReferences": [{"apiVersion": "modelops.dev/v1", "blockOwnerDeletion": true, "controller": true,
                           "kind": "ModelService", "name": "bert", "uid": "uid-1"}]
    },
    "spec": {
      "clusterIP": "10.0.0.17", "clusterIPs": ["10.0.0.17"], "internalTrafficPolicy": "Cluster",
      "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
      "ports": [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}],
      "selector": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/name": "modelservice"},
      "sessionAffinity": "None", "type": "ClusterIP"
    },
    "status": {"loadBalancer": {}}
  })"));
}

HorizontalPodAutoscalerBuilder::HorizontalPodAutoscalerBuilder()
    : ObjectBuilder(json::parse(R"({
    "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
    "metadata": {
      "name": "bert", "namespace": "ml", "uid": "hpa-uid", "resourceVersion": "3001",
      "creationTimestamp": "2023-11-14T22:13:20Z",
      "labels": {"app.kubernetes.io/instance": "bert", "app.kubernetes.io/managed-by": "modelservice-controller",
                 "app.kubernetes.io/name": "modelservice"},
      "ownerReferences": [{"apiVersion": "modelops.dev/v1", "blockOwnerDeletion": true, "controller": true,
                           "kind": "ModelService", "name": "bert", "uid": "uid-1"}]
    },
    "spec": {
      "scaleTargetRef": {"apiVersion": "modelops.dev/v1", "kind": "ModelService", "name": "bert"},
      "minReplicas": 1, "maxReplicas": 10,
      "metrics": [{"type": "External", "external": {
        "metric": {"name": "modelservice_queue_length",
                   "selector": {"matchLabels": {"modelservice": "bert"}}},
        "target": {"type": "AverageValue", "averageValue": "1k"}}}],
      "behavior": {
        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                    "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                                 {"type": "Percent", "value": 100, "periodSeconds": 15}]},
        "scaleDown": {"stabilizationWindowSeconds": 10, "selectPolicy": "Max",
                      "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}
    },
    "status": {
      "currentReplicas": 5, "desiredReplicas": 5, "lastScaleTime": "2023-11-14T22:14:00Z",
      "currentMetrics": [{"type": "External", "external": {
        "metric": {"name": "modelservice_queue_length",
                   "selector": {"matchLabels": {"modelservice": "bert"}}},
        "current": {"averageValue": "4600"}}}],
      "conditions": [
        {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale", "message": "recommended size matches current size",
         "lastTransitionTime": "2023-11-14T22:13:35Z"},
        {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
         "message": "the HPA was able to successfully calculate a replica count from external metric modelservice_queue_length",
         "lastTransitionTime": "2023-11-14T22:13:35Z"},
        {"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange",
         "message": "the desired count is within the acceptable range", "lastTransitionTime": "2023-11-14T22:13:35Z"}]
    }
  })")) {}

HorizontalPodAutoscalerBuilder& HorizontalPodAutoscalerBuilder::Failing(const std::string& type,
                                                                        const std::string& reason,
                                                                        const std::string& message) {
  for (json& c : object_["status"]["conditions"]) {
    if (c["type"] != type) continue;
    c["status"] = "False";
    c["reason"] = reason;
    c["message"] = message;
  }
  return *this;
}

}  // namespace ms::test
