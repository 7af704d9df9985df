// The AdmissionReview path end to end without a socket: every bad input of
// the issue, and the exact responses.
#include "webhook/admission/review.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <optional>

#include "shared/text/base64.h"
#include "shared/text/utf8.h"
#include "webhook/admission/mutating_handler.h"
#include "webhook/admission/validating_handler.h"

namespace ms::admission {
namespace {

using nlohmann::json;

class ReviewTest : public ::testing::Test {
 protected:
  ValidatingHandler validating_;
  MutatingHandler mutating_;

  static json Review(json spec, const std::string& op = "CREATE") {
    json object = {{"apiVersion", "modelops.dev/v1"},
                   {"kind", "ModelService"},
                   {"metadata", {{"name", "bert-qa"}, {"namespace", "default"}}}};
    if (!spec.is_null()) object["spec"] = std::move(spec);
    return {{"apiVersion", "admission.k8s.io/v1"},
            {"kind", "AdmissionReview"},
            {"request",
             {{"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"},
              {"kind", {{"group", "modelops.dev"}, {"version", "v1"}, {"kind", "ModelService"}}},
              {"resource", {{"group", "modelops.dev"}, {"version", "v1"}, {"resource", "modelservices"}}},
              {"name", "bert-qa"},
              {"namespace", "default"},
              {"operation", op},
              {"object", object},
              {"dryRun", false}}}};
  }
  // A review of the scale subresource as the API server sends it: the object
  // is the Scale it builds from the ModelService (spec.replicas omitted when
  // 0, as Go's omitempty does).
  static json ScaleReview(std::optional<int> replicas) {
    json scale = {{"apiVersion", "autoscaling/v1"},
                  {"kind", "Scale"},
                  {"metadata", {{"name", "bert-qa"}, {"namespace", "default"}, {"uid", "u1"}}},
                  {"spec", json::object()},
                  {"status", {{"replicas", 2}, {"selector", "app.kubernetes.io/instance=bert-qa"}}}};
    if (replicas && *replicas != 0) scale["spec"]["replicas"] = *replicas;
    json review = Review(nullptr, "UPDATE");
    review["request"]["kind"] = {{"group", "autoscaling"}, {"version", "v1"}, {"kind", "Scale"}};
    review["request"]["subResource"] = "scale";
    review["request"]["object"] = scale;
    review["request"]["oldObject"] = scale;  // scaled from 2 (a different spec: not ratcheted)
    review["request"]["oldObject"]["spec"] = {{"replicas", replicas == 2 ? 4 : 2}};
    return review;
  }
  transport::Response Validate(const std::string& body, Outcome* o = nullptr) {
    return ServeReview(body, "application/json", validating_, o);
  }
  transport::Response Mutate(const std::string& body, Outcome* o = nullptr) {
    return ServeReview(body, "application/json", mutating_, o);
  }
  // The response object of a 200 answer.
  static json Response(const transport::Response& r) {
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.content_type, "application/json");
    auto j = json::parse(r.body);
    EXPECT_EQ(j["apiVersion"], "admission.k8s.io/v1");
    EXPECT_EQ(j["kind"], "AdmissionReview");
    EXPECT_EQ(j["response"]["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    return j["response"];
  }
};

TEST_F(ReviewTest, AllowsAValidObjectWithExactlyUidAndAllowed) {
  auto r = Validate(Review({{"model", "bert-base-uncased"}, {"image", "i"}, {"replicas", 2}}).dump());
  EXPECT_EQ(json::parse(r.body), json::parse(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",
              "response":{"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true}})"));
}

TEST_F(ReviewTest, DeniesWithEveryErrorAnd422) {
  Outcome o;
  auto r = Validate(Review({{"replicas", 0}, {"port", 65536}}).dump(), &o);
  auto resp = Response(r);
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["code"], 422);
  EXPECT_EQ(resp["status"]["reason"], "Invalid");
  EXPECT_EQ(resp["status"]["message"],
            "spec.model: Required value; spec.replicas: Invalid value: 0: must be between 1 and 100; "
            "spec.port: Invalid value: 65536: must be between 1 and 65535");
  EXPECT_EQ(o.decision, "denied");
  EXPECT_EQ(o.operation, "CREATE");
  EXPECT_EQ(o.Object(), "default/bert-qa");
}

TEST_F(ReviewTest, WarningsTravelWithAllowedResponses) {
  auto resp = Response(Validate(Review({{"model", "m"}, {"gpus", 1}, {"colour", "blue"}}).dump()));
  EXPECT_EQ(resp["allowed"], true);
  ASSERT_EQ(resp["warnings"].size(), 2u);
  EXPECT_EQ(resp["warnings"][0], "unknown field \"spec.colour\"");
}

TEST_F(ReviewTest, MutateReturnsBase64JsonPatchThatAppliesCleanly) {
  auto review = Review({{"model", "m"}});
  auto resp = Response(Mutate(review.dump()));
  EXPECT_EQ(resp["allowed"], true);
  EXPECT_EQ(resp["patchType"], "JSONPatch");
  auto decoded_opt = text::Base64Decode(resp["patch"].get<std::string>());
  ASSERT_TRUE(decoded_opt.has_value());
  const std::string& decoded = *decoded_opt;
  auto patched = review["request"]["object"].patch(json::parse(decoded));
  EXPECT_EQ(patched["spec"], json::parse(R"({"model":"m","runtime":"Custom","replicas":1,"port":8080,"gpus":0,
              "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":0}},
              "rollout":{"timeoutSeconds":600,"rollback":"Manual"}})"));
  // Reinvocation on the patched object: allowed, no patch.
  review["request"]["object"] = patched;
  auto again = Response(Mutate(review.dump()));
  EXPECT_EQ(again, json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true})"));
}

TEST_F(ReviewTest, AutoscalingModeIsValidatedAndDefaulted) {
  // An unsupported mode: denied with the API server's wording (as strategy.type).
  auto resp = Response(Validate(
      Review({{"model", "m"}, {"autoscaling", {{"mode", "KEDA"}, {"maxReplicas", 5}, {"targetQueueLength", 2}}}})
          .dump()));
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["code"], 422);
  EXPECT_EQ(resp["status"]["message"],
            "spec.autoscaling.mode: Unsupported value: \"KEDA\": supported values: \"Controller\", \"HPA\"");
  // HPA: allowed, and left as it is by /mutate.
  auto hpa = Review({{"model", "m"}, {"autoscaling", {{"mode", "HPA"}, {"maxReplicas", 5}, {"targetQueueLength", 2}}}});
  EXPECT_EQ(Response(Validate(hpa.dump()))["allowed"], true);
  auto patched = hpa["request"]["object"].patch(
      json::parse(*text::Base64Decode(Response(Mutate(hpa.dump()))["patch"].get<std::string>())));
  EXPECT_EQ(patched["spec"]["autoscaling"],
            json::parse(R"({"mode":"HPA","minReplicas":1,"maxReplicas":5,"targetQueueLength":2})"));
  // No mode: /mutate adds Controller (before minReplicas).
  auto plain = Review({{"model", "m"}, {"autoscaling", {{"maxReplicas", 5}, {"targetQueueLength", 2}}}});
  const json patch = json::parse(*text::Base64Decode(Response(Mutate(plain.dump()))["patch"].get<std::string>()));
  // (then spec.rollout's defaults, last in design.md's order)
  EXPECT_EQ(patch[patch.size() - 3],
            json::parse(R"({"op":"add","path":"/spec/autoscaling/mode","value":"Controller"})"));
  EXPECT_EQ(patch[patch.size() - 2], json::parse(R"({"op":"add","path":"/spec/autoscaling/minReplicas","value":1})"));
  EXPECT_EQ(patch.back()["path"], "/spec/rollout");
}

// spec.rollout (issue 15): denied in the API server's wording, defaults added one by one.
TEST_F(ReviewTest, RolloutIsValidatedAndDefaulted) {
  auto resp =
      Response(Validate(Review({{"model", "m"}, {"rollout", {{"timeoutSeconds", 10}, {"rollback", "Auto"}}}}).dump()));
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["code"], 422);
  EXPECT_EQ(resp["status"]["reason"], "Invalid");
  EXPECT_EQ(resp["status"]["message"],
            "spec.rollout.timeoutSeconds: Invalid value: 10: must be between 30 and 3600; "
            "spec.rollout.rollback: Unsupported value: \"Auto\": supported values: \"Manual\", \"Automatic\"");

  auto review = Review({{"model", "m"}, {"rollout", {{"rollback", "Automatic"}}}});
  resp = Response(Mutate(review.dump()));
  auto decoded = text::Base64Decode(resp["patch"].get<std::string>());
  ASSERT_TRUE(decoded.has_value());
  const json patch = json::parse(*decoded);
  EXPECT_EQ(patch.back(), json::parse(R"({"op":"add","path":"/spec/rollout/timeoutSeconds","value":600})"));
  EXPECT_EQ(review["request"]["object"].patch(patch)["spec"]["rollout"],
            json::parse(R"({"timeoutSeconds":600,"rollback":"Automatic"})"));
}

TEST_F(ReviewTest, MutateAddsSpecWhenAbsent) {
  auto resp = Response(Mutate(Review(nullptr).dump()));
  auto decoded_opt = text::Base64Decode(resp["patch"].get<std::string>());
  ASSERT_TRUE(decoded_opt.has_value());
  const std::string& decoded = *decoded_opt;
  EXPECT_EQ(json::parse(decoded)[0], json::parse(R"({"op":"add","path":"/spec","value":{}})"));
}

TEST_F(ReviewTest, DeleteAndConnectPassUntouched) {
  for (const char* op : {"DELETE", "CONNECT"}) {
    auto review = Review(nullptr, op);
    review["request"]["object"] = nullptr;
    review["request"]["oldObject"] = {{"spec", {{"replicas", 0}}}};
    EXPECT_EQ(Response(Validate(review.dump())),
              json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true})"));
    EXPECT_EQ(Response(Mutate(review.dump())),
              json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true})"));
  }
}

// Validation ratcheting: an UPDATE that leaves spec as it was, or of an
// object being deleted, is allowed untouched even when the spec breaks a
// rule (tightened after the object was stored); a change to spec is
// checked, and reports the errors about the values it changed.
TEST_F(ReviewTest, UpdatesThatKeepTheSpecOrDeleteAreRatcheted) {
  const json invalid = {{"replicas", 0}, {"model", "m"}};  // replicas must be 1..100
  const json allowed = json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true})");
  auto finalizer_removed = Review(invalid, "UPDATE");
  finalizer_removed["request"]["oldObject"] = finalizer_removed["request"]["object"];
  finalizer_removed["request"]["oldObject"]["metadata"]["finalizers"] = {"modelops.dev/cleanup"};
  EXPECT_EQ(Response(Validate(finalizer_removed.dump())), allowed);
  EXPECT_EQ(Response(Mutate(finalizer_removed.dump())), allowed);  // no defaults patched in either

  // Being deleted: the finalizer's removal passes; a spec change is checked
  // (the chaos soak stored an invalid spec this way when deletion alone
  // ratcheted).
  auto being_deleted = Review(invalid, "UPDATE");
  being_deleted["request"]["object"]["metadata"]["deletionTimestamp"] = "2026-12-01T00:00:00Z";
  being_deleted["request"]["oldObject"] = being_deleted["request"]["object"];
  being_deleted["request"]["oldObject"]["metadata"]["finalizers"] = {"modelops.dev/cleanup"};
  EXPECT_EQ(Response(Validate(being_deleted.dump())), allowed);
  being_deleted["request"]["object"]["spec"]["replicas"] = 101;
  EXPECT_EQ(Response(Validate(being_deleted.dump()))["status"]["message"],
            "spec.replicas: Invalid value: 101: must be between 1 and 100")
      << "a spec change while being deleted";

  auto spec_changed = Review({{"replicas", -1}, {"model", "m"}}, "UPDATE");
  spec_changed["request"]["oldObject"] = Review({{"replicas", 0}, {"model", "old"}})["request"]["object"];
  auto resp = Response(Validate(spec_changed.dump()));
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["message"], "spec.replicas: Invalid value: -1: must be between 1 and 100");
  // CREATE never ratchets, whatever oldObject says; nor does an UPDATE without oldObject.
  auto create = Review(invalid, "CREATE");
  create["request"]["oldObject"] = create["request"]["object"];
  EXPECT_EQ(Response(Validate(create.dump()))["allowed"], false);
  EXPECT_EQ(Response(Validate(Review(invalid, "UPDATE").dump()))["allowed"], false);
}

// Ratcheting per value (issue 41, finding 7), as the API server ratchets a
// CRD's schema: an UPDATE reports an error only when the value it is about
// changed from oldObject (for a rule between fields: any value it reads), so
// an object stored before a rule tightened can be scaled and edited
// elsewhere, and a change of the bad value is checked as usual.
TEST_F(ReviewTest, UpdatesReportOnlyErrorsAboutChangedValues) {
  const json allowed = json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true})");
  auto update = [&](const json& old_spec, const json& new_spec) {
    auto review = Review(new_spec, "UPDATE");
    review["request"]["oldObject"] = Review(old_spec)["request"]["object"];
    return Response(Validate(review.dump()));
  };
  // Stored with a model over today's 253 bytes and a label key the rules refuse.
  const json stored = {{"model", std::string(300, 'm')}, {"replicas", 2}, {"podLabels", {{"!bad", "v"}}}};
  json scaled = stored;
  scaled["replicas"] = 3;
  EXPECT_EQ(update(stored, scaled), allowed) << "scaled";
  json edited = scaled;
  edited["image"] = "registry.local/serve:2";
  edited["podLabels"]["team"] = "nlp";  // another entry of the same map
  EXPECT_EQ(update(stored, edited), allowed) << "edited in other fields";
  json still_bad = edited;
  still_bad["model"] = std::string(260, 'n');
  EXPECT_EQ(update(stored, still_bad)["status"]["message"], "spec.model: Too long: may not be more than 253 bytes");
  json another_label = stored;
  another_label["podLabels"]["!worse"] = "v";
  EXPECT_EQ(update(stored, another_label)["status"]["message"],
            "spec.podLabels: Invalid value: \"!worse\": name part must consist of alphanumeric characters, '-', '_' "
            "or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
            "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
  json fixed = stored;
  fixed["model"] = "m";
  fixed["podLabels"] = {{"ok", "v"}};
  EXPECT_EQ(update(stored, fixed), allowed);

  // A rule between fields: reported only when a value it reads changed.
  const json crossed = {{"model", "m"},
                        {"autoscaling", {{"minReplicas", 5}, {"maxReplicas", 3}, {"targetQueueLength", 2}}}};
  json crossed_scaled = crossed;
  crossed_scaled["replicas"] = 4;
  crossed_scaled["autoscaling"]["targetQueueLength"] = 3;
  EXPECT_EQ(update(crossed, crossed_scaled)["allowed"], true);
  json max_changed = crossed;
  max_changed["autoscaling"]["maxReplicas"] = 4;
  EXPECT_EQ(update(crossed, max_changed)["status"]["message"],
            "spec.autoscaling.minReplicas: Invalid value: 5: must be less than or equal to maxReplicas (4)");
  const json zeros = {
      {"model", "m"},
      {"strategy", {{"type", "RollingUpdate"}, {"rollingUpdate", {{"maxSurge", 0}, {"maxUnavailable", 0}}}}}};
  json zeros_edited = zeros;
  zeros_edited["model"] = "m2";
  EXPECT_EQ(update(zeros, zeros_edited), allowed);
  zeros_edited["strategy"]["rollingUpdate"]["maxSurge"] = "0%";
  EXPECT_EQ(update(zeros, zeros_edited)["status"]["message"],
            "spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when maxSurge is 0");

  // The status is not judged: the API server drops a create's and keeps
  // the stored one on an update of the object before its validating
  // webhooks run (status is a subresource), so an object's review carries
  // none or the stored one. Even one that breaks the schema is let through.
  auto with_status = Review({{"model", "m"}, {"replicas", 3}}, "UPDATE");
  with_status["request"]["object"]["status"] = {{"replicas", "two"}, {"phase", "Happy"}};
  with_status["request"]["oldObject"] = Review({{"model", "m"}})["request"]["object"];
  EXPECT_EQ(Response(Validate(with_status.dump())), allowed);
  auto created_with_status = Review({{"model", "m"}});
  created_with_status["request"]["object"]["status"] = {{"conditions", "none"}};
  EXPECT_EQ(Response(Validate(created_with_status.dump())), allowed);

  // A list is atomic, as the API server's lists without x-kubernetes-list-type:
  // unchanged, its errors are not reported; changed anywhere, all of them are.
  const json listed = {{"model", "m"}, {"env", {{{"name", "MODEL_NAME"}, {"value", "x"}}}}};
  json listed_scaled = listed;
  listed_scaled["replicas"] = 2;
  EXPECT_EQ(update(listed, listed_scaled), allowed);
  json listed_grown = listed;
  listed_grown["env"].push_back({{"name", "OTHER"}, {"value", "y"}});
  EXPECT_EQ(update(listed, listed_grown)["status"]["message"],
            "spec.env[0].name: Forbidden: MODEL_NAME is set by the controller from spec.model: set that field instead");
}

TEST_F(ReviewTest, DryRunIsHandledLikeAnyOtherRequest) {
  auto review = Review({{"replicas", 0}, {"model", "m"}});
  review["request"]["dryRun"] = true;
  auto resp = Response(Validate(review.dump()));
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["code"], 422);
}

TEST_F(ReviewTest, ObjectOfAnotherKindIsDeniedWith400) {
  auto review = Review({{"model", "m"}});
  review["request"]["kind"] = {{"group", "apps"}, {"version", "v1"}, {"kind", "Deployment"}};
  for (auto* h : {static_cast<Handler*>(&validating_), static_cast<Handler*>(&mutating_)}) {
    auto resp = Response(ServeReview(review.dump(), "application/json", *h));
    EXPECT_EQ(resp["allowed"], false);
    EXPECT_EQ(resp["status"]["code"], 400);
    EXPECT_EQ(resp["status"]["message"],
              "this webhook admits modelops.dev ModelService objects only, not group \"apps\" kind \"Deployment\"");
  }
}

// request.kind says ModelService, but the object itself is of another kind
// or group: a 400 naming what the object says, for either handler.
TEST_F(ReviewTest, ObjectThatIsNotAModelServiceIsDeniedWith400) {
  const std::vector<std::pair<json, std::string>> cases = {
      {{{"apiVersion", "modelops.dev/v1"}, {"kind", "Pod"}}, "request.object is not a ModelService (kind \"Pod\")"},
      {{{"apiVersion", "apps/v1"}, {"kind", "ModelService"}},
       "request.object is not a modelops.dev object (apiVersion \"apps/v1\")"},
      {{{"apiVersion", "modelops.devx/v1"}, {"kind", "ModelService"}},
       "request.object is not a modelops.dev object (apiVersion \"modelops.devx/v1\")"},
      {{{"apiVersion", "modelops.dev"}, {"kind", "ModelService"}},
       "request.object is not a modelops.dev object (apiVersion \"modelops.dev\")"},
      {{{"apiVersion", 1}, {"kind", "ModelService"}}, "request.object is not a modelops.dev object (apiVersion 1)"},
  };
  for (const auto& [header, message] : cases) {
    auto review = Review({{"model", "m"}});
    review["request"]["object"]["apiVersion"] = header["apiVersion"];
    review["request"]["object"]["kind"] = header["kind"];
    for (auto* h : {static_cast<Handler*>(&validating_), static_cast<Handler*>(&mutating_)}) {
      auto resp = Response(ServeReview(review.dump(), "application/json", *h));
      EXPECT_EQ(resp["allowed"], false) << message;
      EXPECT_EQ(resp["status"]["code"], 400) << message;
      EXPECT_EQ(resp["status"]["message"], message);
    }
  }
  // Another version of the group is not refused here (the API server only
  // sends the versions the webhook configuration names).
  auto v2 = Review({{"model", "m"}});
  v2["request"]["object"]["apiVersion"] = "modelops.dev/v2";
  EXPECT_EQ(Response(ServeReview(v2.dump(), "application/json", validating_))["allowed"], true);
}

struct BadInput {
  const char* name;
  std::string body;
  int status;
  const char* message_prefix;
};

TEST_F(ReviewTest, UnreadableRequestsGetPlain400sAndNeverAnAllow) {
  json no_uid = Review({{"model", "m"}});
  no_uid["request"].erase("uid");
  json empty_uid = Review({{"model", "m"}});
  empty_uid["request"]["uid"] = "";
  json v1beta1 = Review({{"model", "m"}});
  v1beta1["apiVersion"] = "admission.k8s.io/v1beta1";
  json other_kind = Review({{"model", "m"}});
  other_kind["kind"] = "TokenReview";
  json no_request = {{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}};
  std::string deep(100000, '[');
  deep += std::string(100000, ']');
  std::vector<BadInput> cases = {
      {"not json", "this is not json", 400, "request body is not valid JSON"},
      {"truncated json", Review({{"model", "m"}}).dump().substr(0, 40), 400, "request body is not valid JSON"},
      {"number out of range", R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","x":1e400})", 400,
       "request body is not valid JSON: [json.exception.out_of_range.406] number overflow parsing '1e400'"},
      {"NUL after the document", std::string("{}\0{", 4), 400,
       "request body is not valid JSON: a NUL byte at offset 2"},
      {"lone surrogate escape", R"({"apiVersion":"\uDC00"})", 400, "request body is not valid JSON"},
      {"deeply nested inside a valid prefix", R"({"apiVersion":"admission.k8s.io/v1","request":)" + deep, 400,
       "request body nests deeper than 64 levels"},
      {"json array", "[1,2,3]", 400, "request body is not a JSON object"},
      {"json but not a review", R"({"hello":"world"})", 400, "expected kind AdmissionReview"},
      {"v1beta1", v1beta1.dump(), 400, "admission.k8s.io/v1beta1 AdmissionReview is not supported"},
      {"other kind", other_kind.dump(), 400, "expected kind AdmissionReview"},
      {"no request", no_request.dump(), 400, "AdmissionReview has no request"},
      {"no uid", no_uid.dump(), 400, "AdmissionReview request has no uid"},
      {"empty uid", empty_uid.dump(), 400, "AdmissionReview request has no uid"},
      {"deeply nested", deep, 400, "request body nests deeper than 64 levels"},
      {"too big", std::string(kMaxBodyBytes + 1, ' '), 413, "request body too large"},
  };
  for (const auto& c : cases) {
    for (auto* h : {static_cast<Handler*>(&validating_), static_cast<Handler*>(&mutating_)}) {
      Outcome o;
      auto r = ServeReview(c.body, "application/json", *h, &o);
      EXPECT_EQ(r.status, c.status) << c.name;
      EXPECT_EQ(r.content_type, "text/plain; charset=utf-8") << c.name;
      EXPECT_EQ(r.body.rfind(c.message_prefix, 0), 0u) << c.name << ": " << r.body;
      EXPECT_EQ(r.body.find("\"allowed\""), std::string::npos) << c.name;
      EXPECT_EQ(o.decision, "rejected") << c.name;
    }
  }
}

TEST_F(ReviewTest, ContentTypeIsChecked) {
  auto body = Review({{"model", "m"}}).dump();
  EXPECT_EQ(ServeReview(body, "text/plain", validating_).status, 415);
  EXPECT_EQ(ServeReview(body, "", validating_).status, 415);
  EXPECT_EQ(ServeReview(body, "application/json; charset=utf-8", validating_).status, 200);
  EXPECT_EQ(ServeReview(body, "Application/JSON", validating_).status, 200);
}

TEST_F(ReviewTest, NumbersOfEveryShapeAreDeniedNotCrashed) {
  for (const char* replicas : {"\"2\"", "2.5", "1e2", "99999999999999999999999999", "18446744073709551616", "-0",
                               "true", "null", "{}", "[]"}) {
    std::string body = Review({{"model", "m"}}).dump();
    auto pos = body.find("\"model\":\"m\"");
    body.insert(pos, std::string("\"replicas\":") + replicas + ",");
    auto resp = Response(Validate(body));
    EXPECT_EQ(resp["allowed"], false) << replicas;
    EXPECT_EQ(resp["status"]["code"], 422) << replicas;
    EXPECT_EQ(resp["status"]["message"].get<std::string>().rfind("spec.replicas: Invalid value: ", 0), 0u)
        << resp["status"]["message"];
    // The mutating webhook must not crash either; it leaves replicas alone.
    auto m = Response(Mutate(body));
    EXPECT_EQ(m["allowed"], true);
  }
}

TEST_F(ReviewTest, WrongTypesInsideTheRequestDoNotThrowOut) {
  auto review = Review({{"model", "m"}});
  review["request"]["operation"] = 7;
  review["request"]["namespace"] = json::array();
  review["request"]["kind"] = "ModelService";
  Outcome o;
  auto resp = Response(Validate(review.dump(), &o));
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["code"], 400);
}

// A 400 body is labelled charset=utf-8 and its message goes into a JSON log
// line: bytes the client sent that are not UTF-8 are written as \xNN, never
// copied (the parser's "last read: '...'" and a quoted Content-Type).
TEST_F(ReviewTest, MessagesQuotingTheClientAreValidUtf8) {
  Outcome o;
  for (const std::string body :
       {"{\"a\":\xff}", "\xc3", "{\"apiVersion\": \"\xed\xa0\x80\"}", "[\xf8\x88\x80\x80\x80]"}) {
    SCOPED_TRACE(json(body).dump(-1, ' ', true, json::error_handler_t::replace));
    const transport::Response r = Validate(body, &o);
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.content_type, "text/plain; charset=utf-8");
    EXPECT_TRUE(text::IsValidUtf8(r.body)) << json(r.body).dump(-1, ' ', true, json::error_handler_t::replace);
    EXPECT_TRUE(text::IsValidUtf8(o.message));
    EXPECT_NE(r.body.find("\\x"), std::string::npos) << r.body;
  }
  const transport::Response ct = ServeReview("{}", "text/\xff\xfe", validating_, &o);
  EXPECT_EQ(ct.status, 415);
  EXPECT_EQ(ct.body, "unsupported Content-Type \"text/\\xff\\xfe\": expected application/json\n");
}

// A hostile review's huge object costs time in proportion to its size (n log
// n), not to its square: 100,000 members of spec in reverse key order (the
// worst order for an insertion sort, which took 47 s of CPU over them) are
// answered, as a CREATE (a warning per unknown member, in key order) and as
// an UPDATE whose spec is oldObject's in the other order (ratcheted: allowed
// untouched, the two specs compared member by member).
TEST_F(ReviewTest, HugeObjectsInReverseKeyOrderAreAnsweredInLinearithmicTime) {
  constexpr int kMembers = 100000;
  std::string reversed = R"({"model":"m")", forward = R"({"model":"m")";
  for (int i = kMembers; i >= 1; --i) reversed += ",\"k" + std::to_string(1000000 + i) + "\":1";
  for (int i = 1; i <= kMembers; ++i) forward += ",\"k" + std::to_string(1000000 + i) + "\":1";
  reversed += '}';
  forward += '}';
  auto with = [](std::string body, const std::string& placeholder, const std::string& text) {
    body.replace(body.find(placeholder), placeholder.size(), text);
    return body;
  };

  const json create = Response(Validate(with(Review("SPEC").dump(), "\"SPEC\"", reversed)));
  EXPECT_EQ(create["allowed"], true);
  ASSERT_EQ(create["warnings"].size(), kMaxWarnings + 1);  // the first 15, then how many more
  EXPECT_EQ(create["warnings"][0], "unknown field \"spec.k1000001\"");
  EXPECT_EQ(create["warnings"][kMaxWarnings - 1], "unknown field \"spec.k1000015\"");
  EXPECT_EQ(create["warnings"][kMaxWarnings], "... and 99985 more warnings");

  json update = Review("SPEC", "UPDATE");
  update["request"]["oldObject"] = update["request"]["object"];
  update["request"]["oldObject"]["spec"] = "OLD";
  const json ratcheted = Response(Validate(with(with(update.dump(), "\"SPEC\"", reversed), "\"OLD\"", forward)));
  EXPECT_EQ(ratcheted, json({{"allowed", true}, {"uid", "705ab4f5-6393-11e8-b7cc-42010a800002"}}));
}

// Issue 41's review: 110,000 invalid podLabels keys in 1.5 MB got a 31 MB
// denial. The definition bounds the map (maxProperties, as the CRD does), so
// the parser reports it in one error and reads none of it; within the
// bound, a denial lists 16 errors and how many more. Either way the answer
// is a few KiB.
TEST_F(ReviewTest, AReviewWithAHundredThousandBadKeysGetsAnAnswerOfAFewKiB) {
  auto with_labels = [](int n) {
    std::string labels = "{";
    char key[16];
    for (int i = 0; i < n; ++i) {
      std::snprintf(key, sizeof key, "\"!%06d\"", i);
      labels += (i ? "," : "") + std::string(key) + ":\"v\"";
    }
    labels += "}";
    std::string body = Review({{"model", "m"}, {"podLabels", "LABELS"}}).dump();
    body.replace(body.find("\"LABELS\""), 8, labels);
    return body;
  };
  const std::string issue = with_labels(110000);
  ASSERT_GT(issue.size(), 1'500'000u);
  const auto r = Validate(issue);
  EXPECT_LT(r.body.size(), 6 * 1024u);
  json resp = Response(r);
  EXPECT_EQ(resp["allowed"], false);
  EXPECT_EQ(resp["status"]["message"], "spec.podLabels: Too many: 110000: must have at most 64 items");

  const auto bounded = Validate(with_labels(64));
  EXPECT_LT(bounded.body.size(), 6 * 1024u);
  resp = Response(bounded);
  const std::string problem =
      ": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
  std::string want;
  char key[16];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(key, sizeof key, "\"!%06d\"", i);
    want += (i ? "; " : "") + std::string("spec.podLabels: Invalid value: ") + key + problem;
  }
  EXPECT_EQ(resp["status"]["message"], want + "; ... and 48 more errors");
}

TEST_F(ReviewTest, ScaleSubresourceTakesTheReplicasRule) {
  for (int replicas : {0, 101, -3}) {
    auto resp = Response(Validate(ScaleReview(replicas).dump()));
    EXPECT_EQ(resp["allowed"], false) << replicas;
    EXPECT_EQ(resp["status"]["code"], 422);
    EXPECT_EQ(resp["status"]["reason"], "Invalid");
    EXPECT_EQ(resp["status"]["message"],
              "spec.replicas: Invalid value: " + std::to_string(replicas) + ": must be between 1 and 100");
  }
  for (int replicas : {1, 3, 100})
    EXPECT_EQ(Response(Validate(ScaleReview(replicas).dump())),
              json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true})"))
        << replicas;
  // The mutating webhook has nothing to default on a Scale.
  EXPECT_EQ(Response(Mutate(ScaleReview(3).dump())),
            json::parse(R"({"uid":"705ab4f5-6393-11e8-b7cc-42010a800002","allowed":true})"));
  // A Scale of some other resource, or a ModelService review whose object is a Scale: 400.
  auto other = ScaleReview(3);
  other["request"]["resource"]["resource"] = "deployments";
  EXPECT_EQ(Response(Validate(other.dump()))["status"]["code"], 400);
  auto not_scale = ScaleReview(3);
  not_scale["request"]["kind"] = {{"group", "modelops.dev"}, {"version", "v1"}, {"kind", "ModelService"}};
  EXPECT_EQ(Response(Validate(not_scale.dump()))["status"]["code"], 400);
}

TEST(NestingExceeds, CountsOnlyStructureOutsideStrings) {
  EXPECT_FALSE(NestingExceeds(R"({"a":"[[[[[[[[[["})", 2));
  EXPECT_TRUE(NestingExceeds("[[[", 2));
  EXPECT_FALSE(NestingExceeds("[[]]", 2));
  EXPECT_FALSE(NestingExceeds(R"({"a\"[[[":1})", 1));
}

}  // namespace
}  // namespace ms::admission
