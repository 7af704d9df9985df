#include "shared/text/json_ref.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "shared/text/json_text.h"

namespace ms::text {

namespace {

std::string_view Name(const rapidjson::Value& v) { return {v.GetString(), v.GetStringLength()}; }

// A double as an integer of type T: truncated toward zero, and clamped to
// T's range (NaN: 0). A bare static_cast is undefined behaviour outside it.
template <typename T>
T Clamped(double d) {
  constexpr double kBeyond = 2.0 * static_cast<double>(std::numeric_limits<T>::max() / 2 + 1);  // 2^63 or 2^64
  if (std::isnan(d)) return 0;
  if (d >= kBeyond) return std::numeric_limits<T>::max();
  if (d <= static_cast<double>(std::numeric_limits<T>::min()) - 1.0) return std::numeric_limits<T>::min();
  return static_cast<T>(d);
}

nlohmann::json Convert(const rapidjson::Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return nullptr;
    case rapidjson::kFalseType:
      return false;
    case rapidjson::kTrueType:
      return true;
    case rapidjson::kStringType:
      return std::string(v.GetString(), v.GetStringLength());
    case rapidjson::kNumberType:
      if (v.IsDouble()) return v.GetDouble();
      if (v.IsUint64()) return v.GetUint64();
      return v.GetInt64();
    case rapidjson::kArrayType: {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& e : v.GetArray()) out.push_back(Convert(e));
      return out;
    }
    case rapidjson::kObjectType: {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& m : v.GetObject()) out[std::string(Name(m.name))] = Convert(m.value);  // the last wins
      return out;
    }
  }
  return nullptr;
}

}  // namespace

int64_t JsonRef::int64() const {
  if (n_) return n_->is_number_float() ? Clamped<int64_t>(n_->get<double>()) : n_->get<int64_t>();
  if (r_->IsInt64()) return r_->GetInt64();
  if (r_->IsUint64()) return static_cast<int64_t>(r_->GetUint64());
  return Clamped<int64_t>(r_->GetDouble());
}

uint64_t JsonRef::uint64() const {
  if (n_) return n_->is_number_float() ? Clamped<uint64_t>(n_->get<double>()) : n_->get<uint64_t>();
  if (r_->IsUint64()) return r_->GetUint64();
  if (r_->IsInt64()) return static_cast<uint64_t>(r_->GetInt64());
  return Clamped<uint64_t>(r_->GetDouble());
}

double JsonRef::number() const {
  if (n_) return n_->get<double>();
  if (r_->IsDouble()) return r_->GetDouble();
  if (r_->IsUint64()) return static_cast<double>(r_->GetUint64());
  return static_cast<double>(r_->GetInt64());
}

size_t JsonRef::size() const {
  if (n_) return n_->size();
  if (r_->IsArray()) return r_->Size();
  if (!r_->IsObject()) return r_->IsNull() ? 0 : 1;  // as nlohmann's size()
  size_t n = 0;
  for_each_member([&n](std::string_view, JsonRef) { ++n; });
  return n;
}

std::optional<JsonRef> JsonRef::find(std::string_view key) const {
  if (n_) {
    if (!n_->is_object()) return std::nullopt;
    auto it = n_->find(key);
    if (it == n_->end()) return std::nullopt;
    return JsonRef(*it);
  }
  if (!r_->IsObject()) return std::nullopt;
  // Every member, for the last of a repeated key; the length first (most
  // names differ there), without making a view of each name.
  const rapidjson::Value* found = nullptr;
  for (auto m = r_->MemberBegin(), end = r_->MemberEnd(); m != end; ++m) {
    if (m->name.GetStringLength() != key.size()) continue;
    const char* name = m->name.GetString();
    if (key.empty() || (name[0] == key[0] && std::memcmp(name, key.data(), key.size()) == 0)) found = &m->value;
  }
  if (!found) return std::nullopt;
  return JsonRef(*found);
}

size_t JsonRef::SortedMembers(const Member** buf, size_t cap, std::unique_ptr<const Member*[]>& heap,
                              const Member**& out) const {
  const size_t count = r_->MemberCount();
  out = buf;
  if (count > cap) {
    heap = std::make_unique<const Member*[]>(count);
    out = heap.get();
  }
  size_t n = 0;
  bool sorted = true;
  for (auto it = r_->MemberBegin(); it != r_->MemberEnd(); ++it) {
    if (n > 0 && !NameLess(Name(out[n - 1]->name), Name(it->name))) sorted = false;
    out[n++] = &*it;
  }
  if (sorted) return n;  // strictly increasing keys: no duplicates either
  // Stable, so that of repeated keys the document's last stays last: an
  // insertion sort for the usual few members (no allocation), std::stable_sort
  // for more (an object of a hostile review may have hundreds of thousands,
  // which an insertion sort takes minutes over).
  auto less = [](const Member* x, const Member* y) { return NameLess(Name(x->name), Name(y->name)); };
  if (n <= cap) {
    for (size_t i = 1; i < n; ++i)
      for (size_t j = i; j > 0 && less(out[j], out[j - 1]); --j) std::swap(out[j], out[j - 1]);
  } else {
    std::stable_sort(out, out + n, less);
  }
  // Of equal keys keep the last (stable: the last in the document).
  size_t w = 0;
  for (size_t i = 0; i < n; ++i) {
    if (i + 1 < n && NameEqual(Name(out[i]->name), Name(out[i + 1]->name))) continue;
    out[w++] = out[i];
  }
  return w;
}

nlohmann::json JsonRef::ToJson() const { return n_ ? *n_ : Convert(*r_); }

std::string JsonRef::dump() const {
  // Integers and strings, of either tree, as nlohmann writes them but
  // without its serializer (and its localeconv per number).
  if (is_number_integer()) return is_number_unsigned() ? std::to_string(uint64()) : std::to_string(int64());
  if (is_string()) {  // json_text.h
    std::string out;
    out.reserve(str().size() + 2);
    AppendJsonString(out, str());
    return out;
  }
  if (n_) return n_->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return ToJson().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool JsonEqual(JsonRef a, JsonRef b) {
  if (a.nlohmann_value() && b.nlohmann_value()) return *a.nlohmann_value() == *b.nlohmann_value();
  if (a.is_number() && b.is_number()) {
    if (a.is_number_float() || b.is_number_float()) return a.number() == b.number();
    return a.int64() == b.int64();  // nlohmann compares a signed and an unsigned integer so
  }
  if (a.is_string() && b.is_string()) return a.str() == b.str();
  if (a.is_boolean() && b.is_boolean()) return a.boolean() == b.boolean();
  if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();
  if (a.is_array() && b.is_array()) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (!JsonEqual(a.at(i), b.at(i))) return false;
    return true;
  }
  if (a.is_object() && b.is_object()) {
    // Both in key order, side by side (a search of b per member of a is
    // quadratic in a hostile review's huge objects).
    std::vector<std::pair<std::string_view, JsonRef>> theirs;
    b.for_each_member([&](std::string_view key, JsonRef v) { theirs.emplace_back(key, v); });
    size_t i = 0;
    bool equal = true;
    a.for_each_member([&](std::string_view key, JsonRef v) {
      equal = equal && i < theirs.size() && NameEqual(key, theirs[i].first) && JsonEqual(v, theirs[i].second);
      ++i;
    });
    return equal && i == theirs.size();
  }
  return false;
}

}  // namespace ms::text
