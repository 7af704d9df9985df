// InformerSet (informer_set.h): a LIST and a WATCH per watched namespace,
// never a cluster-wide one when namespaces are named (Roles in those
// namespaces do not allow it), one source for the handlers, Get() by the
// key's namespace, synced once every namespace's informer has.
#include "controller/runtime/informer_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test/support/fake_clock.h"
#include "test/support/verb_client.h"

namespace ms::runtime {
namespace {

using kube::Result;
using nlohmann::json;

// Lists answer with the objects of the namespace in the path (403 for a
// cluster-wide list, as RBAC granted by Roles answers it); watches stay
// quiet until stopped. Every call tells the clock.
class NamespacedApi final : public test::VerbClient {
 public:
  explicit NamespacedApi(const FakeClock& clock) : clock_(clock) {}
  std::map<std::string, std::vector<std::string>> names;  // namespace -> object names

  Result OnList(const std::string& path) override {
    Result r;
    {
      std::lock_guard<std::mutex> g(mu_);
      lists_.push_back(path.substr(0, path.find('?')));
      const std::string prefix = "/apis/apps/v1/namespaces/";
      if (path.rfind(prefix, 0) != 0) {
        r.code = 403;
        r.error = kube::Status{403, "Forbidden", "deployments.apps is forbidden at the cluster scope"};
      } else {
        const std::string ns = path.substr(prefix.size(), path.find('/', prefix.size()) - prefix.size());
        r.code = 200;
        r.body = {{"metadata", {{"resourceVersion", "10"}}}, {"items", json::array()}};
        for (const std::string& n : names[ns])
          r.body["items"].push_back({{"metadata", {{"name", n}, {"namespace", ns}, {"resourceVersion", "5"}}}});
      }
    }
    clock_.Notify();
    return r;
  }
  Result Watch(const std::string&, const kube::WatchHandler&, std::stop_token stop) override {
    std::mutex m;
    std::unique_lock<std::mutex> lock(m);
    std::condition_variable_any().wait(lock, stop, [] { return false; });
    Result r;
    r.code = 200;
    return r;
  }
  std::vector<std::string> lists() const {
    std::lock_guard<std::mutex> g(mu_);
    return lists_;
  }

 private:
  const FakeClock& clock_;
  mutable std::mutex mu_;
  std::vector<std::string> lists_;
};

struct Added {
  std::mutex mu;
  std::vector<std::string> keys;
  EventHandler Handler(const FakeClock& clock) {
    EventHandler h;
    h.on_add = [this, &clock](const json& o) {
      {
        std::lock_guard<std::mutex> g(mu);
        keys.push_back(o["metadata"]["namespace"].get<std::string>() + "/" + o["metadata"]["name"].get<std::string>());
      }
      clock.Notify();
    };
    return h;
  }
  std::vector<std::string> Sorted() {
    std::lock_guard<std::mutex> g(mu);
    std::vector<std::string> out = keys;
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST(InformerSet, OneListAndWatchPerNamespaceOneSourceForTheHandlers) {
  FakeClock clock;
  NamespacedApi api(clock);
  api.names = {{"team-a", {"x", "y"}}, {"team-b", {"z"}}, {"other", {"w"}}};
  InformerSet set(api, clock, nullptr, "/apis/apps/v1/deployments", "", {"team-a", "team-b"});
  Added added;
  set.AddEventHandler(added.Handler(clock));
  std::atomic<int> synced{0};
  set.OnSynced([&] {
    synced++;
    clock.Notify();
  });
  ASSERT_EQ(set.Informers().size(), 2u);
  std::vector<std::jthread> threads;
  for (Informer* inf : set.Informers()) threads.emplace_back([inf](std::stop_token s) { inf->Run(s); });

  ASSERT_TRUE(clock.Eventually([&] { return set.HasSynced() && synced == 1; }));
  std::vector<std::string> lists = api.lists();
  std::sort(lists.begin(), lists.end());
  EXPECT_EQ(lists, (std::vector<std::string>{"/apis/apps/v1/namespaces/team-a/deployments",
                                             "/apis/apps/v1/namespaces/team-b/deployments"}))
      << "no cluster-wide list, none of another namespace";
  EXPECT_EQ(added.Sorted(), (std::vector<std::string>{"team-a/x", "team-a/y", "team-b/z"}));
  EXPECT_TRUE(set.Get("team-a/x"));
  EXPECT_TRUE(set.Get("team-b/z"));
  EXPECT_FALSE(set.Get("team-a/z"));
  EXPECT_FALSE(set.Get("other/w")) << "a namespace not watched";
  set.Stop();
  threads.clear();
  EXPECT_EQ(synced, 1) << "told once, when the last namespace synced";
}

TEST(InformerSet, NoNamespaceIsOneInformerOverAll) {
  FakeClock clock;
  NamespacedApi api(clock);
  InformerSet set(api, clock, nullptr, "/apis/apps/v1/deployments", "", {});
  ASSERT_EQ(set.Informers().size(), 1u);
  EXPECT_EQ(set.Informers()[0]->path(), "/apis/apps/v1/deployments");
}

}  // namespace
}  // namespace ms::runtime
