#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "controller/runtime/dispatcher.h"
#include "controller/runtime/store.h"

namespace ms::runtime {
namespace {

using nlohmann::json;

json Obj(const std::string& name, const std::string& image) {
  return {{"metadata", {{"name", name}, {"namespace", "ns"}}}, {"spec", {{"image", image}}}};
}

std::map<std::string, std::string> Packed(const std::vector<json>& objects) {
  std::map<std::string, std::string> out;
  for (const json& o : objects) out["ns/" + o["metadata"]["name"].get<std::string>()] = Store::Pack(o);
  return out;
}

// A list's deltas keep their objects packed until a handler is handed them,
// so that thousands of listed objects are not held decoded at once (the
// controller's memory peak at a cold start); decoded, they are what was listed.
TEST(StoreTest, AListsDeltasCarryTheirObjectsPackedAndDecodeToWhatWasListed) {
  Store store;
  std::vector<Delta> first = store.Replace(Packed({Obj("a", "v1"), Obj("b", "v1")}), "10");
  ASSERT_EQ(first.size(), 2u);
  for (const Delta& d : first) {
    EXPECT_EQ(d.type, Delta::Type::kAdd);
    EXPECT_TRUE(d.object.packed()) << d.key;
    EXPECT_TRUE(d.old_object.empty()) << d.key;
  }
  EXPECT_EQ(first[0].key, "ns/a");
  EXPECT_EQ(*first[0].object.Get(), Obj("a", "v1"));
  EXPECT_EQ(*first[1].object.Get(), Obj("b", "v1"));

  // A relist: a vanished, b changed, c new, in that order (deletes first).
  std::vector<Delta> second = store.Replace(Packed({Obj("b", "v2"), Obj("c", "v1")}), "20");
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second[0].type, Delta::Type::kDelete);
  EXPECT_TRUE(second[0].old_object.packed());
  EXPECT_EQ(*second[0].old_object.Get(), Obj("a", "v1"));
  EXPECT_EQ(second[1].type, Delta::Type::kUpdate);
  EXPECT_EQ(*second[1].old_object.Get(), Obj("b", "v1"));
  EXPECT_EQ(*second[1].object.Get(), Obj("b", "v2"));
  EXPECT_EQ(second[2].type, Delta::Type::kAdd);
  EXPECT_EQ(*second[2].object.Get(), Obj("c", "v1"));
  EXPECT_EQ(store.ResourceVersion(), "20");
  EXPECT_EQ(store.Get("ns/b"), Obj("b", "v2"));
}

// A watch event's object is decoded once, however many handlers see it.
TEST(StoreTest, AWatchEventsDeltaCarriesItsObjectDecodedOnce) {
  Store store;
  Delta added = store.Upsert("ns/a", Obj("a", "v1"), "5");
  EXPECT_FALSE(added.object.packed());
  EXPECT_EQ(added.object.Get().get(), added.object.Get().get());
  EXPECT_EQ(*added.object.Get(), Obj("a", "v1"));
  Delta updated = store.Upsert("ns/a", Obj("a", "v2"), "6");
  EXPECT_EQ(updated.type, Delta::Type::kUpdate);
  EXPECT_EQ(*updated.old_object.Get(), Obj("a", "v1"));
  EXPECT_EQ(*updated.object.Get(), Obj("a", "v2"));
}

// Handlers are handed a list's deltas decoded, in order, each handler all of
// them, before Distribute() returns; a handler that throws loses that delta
// only, and not for the others.
TEST(DispatcherTest, HandlersAreHandedAListsObjectsDecoded) {
  Store store;
  Dispatcher dispatcher("test", nullptr);
  std::vector<std::string> seen;
  auto record = [&seen](std::string who) {
    return [&seen, who](const json& o) {
      const std::string name = o["metadata"]["name"].get<std::string>();
      if (who == "first" && name == "b") throw std::runtime_error("no");
      seen.push_back(who + " " + name + "=" + o["spec"]["image"].get<std::string>());
    };
  };
  dispatcher.AddHandler({.on_add = record("first"), .on_update = {}, .on_delete = {}});
  dispatcher.AddHandler({.on_add = record("second"), .on_update = {}, .on_delete = {}});
  dispatcher.Distribute(store.Replace(Packed({Obj("a", "v1"), Obj("b", "v3"), Obj("c", "v4")}), "1"));
  EXPECT_EQ(seen, (std::vector<std::string>{"first a=v1", "second a=v1", "second b=v3", "first c=v4", "second c=v4"}));
}

}  // namespace
}  // namespace ms::runtime
