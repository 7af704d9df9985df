// Gauges whose series belong to Kubernetes objects (a ModelService's
// replicas, conditions and version; an autoscaled object's last reading),
// labelled {namespace, name, ...}: an object's series are found by its key,
// set and dropped in O(log N), and held once. Label values are interned:
// each distinct value is held once for the family (counted, dropped with
// its last series) and a series refers to them, since they come
// from small sets (a condition's type, status and reason) shared by
// thousands of objects (bench/metrics_bench.cc, SeriesMemory/10000: the
// three ModelService families' heap per object, 1,136 bytes as vectors of
// strings, 720 interned).
//
// Why not a prometheus::Family: prometheus-cpp 1.0's Family::Remove finds a
// series by scanning the whole family, so dropping one series costs time
// proportional to the number of objects (bench/metrics_bench.cc,
// ConditionChange/N: 14 us at 1,000 objects, 931 us at 10,000), and a
// caller that must replace an object's series also has to remember their
// labels beside the family's own copy (about 5 KB per ModelService).
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace ms::metrics {

class ObjectGauges final : public prometheus::Collectable {
 public:
  // One series of an object: the values of the family's series labels (the
  // names given at construction, after namespace and name), in order.
  struct Series {
    std::vector<std::string> labels;
    double value = 1;
    bool operator==(const Series&) const = default;
  };

  // `series_labels`: the label names after {namespace, name}; none for one
  // series per object.
  ObjectGauges(std::string name, std::string help, std::vector<std::string> series_labels = {});

  // The object has exactly `series` (none: it has no series).
  void Set(const std::string& ns, const std::string& name, std::vector<Series> series);
  // Sets the object's series with these labels, adding it if new; the
  // object's other series stay.
  void Put(const std::string& ns, const std::string& name, Series series);
  // Drops all of the object's series (the object is gone).
  void Remove(const std::string& ns, const std::string& name);

  std::size_t Objects() const;
  // Distinct label values held (each once, whatever the number of series).
  std::size_t LabelValues() const;
  // One gauge family, its series by namespace, name, then as set, each
  // series' labels in name order (as prometheus-cpp); none while no object
  // has a series.
  std::vector<prometheus::MetricFamily> Collect() const override;
  // The same family in parts of at most `max_series` series each, in the
  // same order, handed to `each` one at a time (under the lock: `each` must
  // not call back into this object). What metrics::Serialize uses: a family
  // collected whole holds a copy of every label of every series (about 4 KB
  // per ModelService at a scrape, 41 MB at 10,000).
  void CollectInParts(std::size_t max_series, const std::function<void(prometheus::MetricFamily)>& each) const;
  const std::string& name() const { return name_; }

 private:
  const std::string name_;
  const std::string help_;
  const std::vector<std::string> series_labels_;
  // Label value -> how many series hold it.
  using Pool = std::map<std::string, std::size_t, std::less<>>;
  // An object's series: the label values of each in turn (series_labels_
  // of them a series, entries of pool_) and each one's value.
  struct Held {
    std::vector<Pool::iterator> labels;
    std::vector<double> values;
  };
  using ObjectMap = std::map<std::pair<std::string, std::string>, Held>;
  // The interned form of `series` (each value's count taken); Release()
  // gives them back.
  std::vector<Pool::iterator> Intern(const std::vector<Series>& series);
  void Release(const std::vector<Pool::iterator>& labels);
  // Forgets the object and gives its label values back.
  void Drop(ObjectMap::iterator it);
  // The label values of `held`'s series i equal `labels`.
  bool Same(const Held& held, std::size_t i, const std::vector<std::string>& labels) const;

  // Every label name and where its value comes from (0: namespace, 1: name,
  // 2 + i: series label i), in name order.
  std::vector<std::pair<std::string, std::size_t>> order_;
  mutable std::mutex mu_;
  ObjectMap objects_;
  Pool pool_;
};

}  // namespace ms::metrics
