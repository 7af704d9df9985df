// The Kubernetes objects the controller's tests start from, built in one
// place: a ModelService as the API server stores it, and the objects the
// controller owns (Deployment, Service, HorizontalPodAutoscaler) as the API
// server returns them. The builders only fill in JSON; they know nothing of
// the controller, so a test that builds an owned object from what the
// controller would write (DesiredDeployment, ...) passes that in.
//
//   json ms = test::ModelService().Spec({{"replicas", 2}}).Finalizer().Build();
//   json dep = test::Deployment(DesiredDeployment(spec, 2)).RolledOut(2).Build();
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace ms::test {

// What every builder sets in metadata.
template <typename Self>
class ObjectBuilder {
 public:
  Self& Name(const std::string& name) { return Set("name", name); }
  Self& Namespace(const std::string& ns) { return Set("namespace", ns); }
  Self& Uid(const std::string& uid) { return Set("uid", uid); }
  Self& ResourceVersion(const std::string& rv) { return Set("resourceVersion", rv); }
  Self& Generation(int64_t generation) { return Set("generation", generation); }
  Self& Label(const std::string& key, const std::string& value) {
    object_["metadata"]["labels"][key] = value;
    return self();
  }
  Self& Annotation(const std::string& key, const std::string& value) {
    object_["metadata"]["annotations"][key] = value;
    return self();
  }
  // metadata.deletionTimestamp: the object is being deleted.
  Self& Deleting(const std::string& since = "2024-01-01T00:00:00Z") { return Set("deletionTimestamp", since); }
  // Merged into the object (RFC 7386), for anything the setters do not say.
  Self& Merge(const nlohmann::json& patch) {
    object_.merge_patch(patch);
    return self();
  }
  // Replaces the status.
  Self& Status(const nlohmann::json& status) {
    object_["status"] = status;
    return self();
  }

  nlohmann::json Build() const { return object_; }
  operator nlohmann::json() const { return object_; }  // NOLINT: a builder reads as the object it builds

 protected:
  explicit ObjectBuilder(nlohmann::json object) : object_(std::move(object)) {}
  Self& self() { return static_cast<Self&>(*this); }
  Self& Set(const char* key, const nlohmann::json& value) {
    object_["metadata"][key] = value;
    return self();
  }
  nlohmann::json object_;
};

// A ModelService ml/bert (uid uid-1, resourceVersion 100, generation 1) with
// spec {model: bert-base, replicas: 2}: no finalizer, no status.
class ModelServiceBuilder : public ObjectBuilder<ModelServiceBuilder> {
 public:
  ModelServiceBuilder();
  // Sets spec fields (merged: a null value removes one).
  ModelServiceBuilder& Spec(const nlohmann::json& fields);
  // Replaces the whole spec.
  ModelServiceBuilder& WholeSpec(const nlohmann::json& spec);
  // spec.version and spec.image.
  ModelServiceBuilder& Version(const std::string& version, const std::string& image);
  // Every spec field the webhook defaults, spelled out (port 8080, gpus 0, RollingUpdate 25%/0).
  ModelServiceBuilder& Defaulted();
  // spec.autoscaling.
  ModelServiceBuilder& Autoscaling(const std::string& mode, int64_t min, int64_t max, int64_t target_queue_length);
  // metadata.finalizers: [modelops.dev/cleanup], as after the first reconcile.
  ModelServiceBuilder& Finalizer();
};
inline ModelServiceBuilder ModelService() { return ModelServiceBuilder(); }

// An owned object as the API server returns it: `written` (what the
// controller wrote, e.g. DesiredDeployment()) with the uid, resourceVersion,
// generation 1 and creationTimestamp the server adds.
class DeploymentBuilder : public ObjectBuilder<DeploymentBuilder> {
 public:
  explicit DeploymentBuilder(nlohmann::json written);
  struct Served {};
  DeploymentBuilder(Served, nlohmann::json served);
  // A status as the Deployment controller reports it for the current
  // generation: `replicas` pods, `updated` on the current template, `ready`
  // of them ready and available; a Progressing condition
  // NewReplicaSetAvailable.
  DeploymentBuilder& Rollout(int replicas, int updated, int ready);
  // Every replica updated, ready and available.
  DeploymentBuilder& RolledOut(int replicas) { return Rollout(replicas, replicas, replicas); }
  // The Progressing condition says the progress deadline passed.
  DeploymentBuilder& ProgressDeadlineExceeded(const std::string& message);
};
inline DeploymentBuilder Deployment(nlohmann::json written) { return DeploymentBuilder(std::move(written)); }

// The Deployment the API server returns for ModelService ml/bert {version
// 3, image registry.local/serve:1.4, replicas 2, gpus 1, defaults}: the
// controller's fields with every default the server fills in, managedFields,
// a revision annotation, rolled out (2/2). Written out in full, not built
// from the controller's code, so that a repair that sees drift in what the
// server defaults fails a test.
DeploymentBuilder ServedDeployment();

class ServiceBuilder : public ObjectBuilder<ServiceBuilder> {
 public:
  explicit ServiceBuilder(nlohmann::json written);
  struct Served {};
  ServiceBuilder(Served, nlohmann::json served);
};
inline ServiceBuilder Service(nlohmann::json written) { return ServiceBuilder(std::move(written)); }

// The Service the API server returns for ModelService ml/bert (port 8080),
// with the fields it fills in (clusterIP, protocol, ...), written out in full.
ServiceBuilder ServedService();

// The autoscaling/v2 HorizontalPodAutoscaler of ModelService ml/bert in mode
// HPA as the API server returns it: 1..10 replicas, the External metric
// modelservice_queue_length at averageValue "1k" (targetQueueLength 1000 in
// canonical form), behavior with the server's defaults (scale-down window
// 10 s), and a status of 5 replicas, able to scale.
class HorizontalPodAutoscalerBuilder : public ObjectBuilder<HorizontalPodAutoscalerBuilder> {
 public:
  HorizontalPodAutoscalerBuilder();
  // A status condition (AbleToScale, ScalingActive...) set to False.
  HorizontalPodAutoscalerBuilder& Failing(const std::string& type, const std::string& reason,
                                          const std::string& message);
};
inline HorizontalPodAutoscalerBuilder HorizontalPodAutoscaler() { return HorizontalPodAutoscalerBuilder(); }

}  // namespace ms::test
