#include "base/metrics.h"

#include <unistd.h>

#include <sys/resource.h>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace ms::metrics {

namespace {

void AtomicAdd(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

void AppendLabels(std::string& out, const Labels& const_labels, const Labels& labels, const std::string* le = nullptr) {
  if (const_labels.empty() && labels.empty() && le == nullptr) return;
  out += '{';
  bool first = true;
  auto one = [&](const std::string& k, const std::string& v) {
    if (!first) out += ',';
    first = false;
    out += k;
    out += "=\"";
    out += EscapeLabelValue(v);
    out += '"';
  };
  for (const auto& [k, v] : const_labels) one(k, v);
  for (const auto& [k, v] : labels)
    if (!const_labels.count(k)) one(k, v);
  if (le) one("le", *le);
  out += '}';
}

void Header(std::string& out, const std::string& name, const std::string& help, const char* type) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += EscapeHelp(help);
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

}  // namespace

void Counter::Increment(double v) {
  if (!(v >= 0)) return;
  AtomicAdd(value_, v);
}

void Gauge::Increment(double v) { AtomicAdd(value_, v); }

Histogram::Histogram(BucketBoundaries buckets) : bounds_(std::move(buckets)) {
  for (size_t i = 1; i < bounds_.size(); ++i)
    if (!(bounds_[i] > bounds_[i - 1])) throw std::invalid_argument("histogram buckets must be strictly increasing");
  counts_.assign(bounds_.size() + 1, 0);
}

void Histogram::Observe(double v) {
  size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  std::lock_guard<std::mutex> g(mu_);
  ++counts_[i];
  sum_ += v;
  ++count_;
}

Histogram::Snapshot Histogram::Collect() const {
  Snapshot s;
  s.bounds = bounds_;
  std::lock_guard<std::mutex> g(mu_);
  uint64_t acc = 0;
  for (auto c : counts_) {
    acc += c;
    s.cumulative.push_back(acc);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

BucketBoundaries DefaultBuckets() { return {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}; }

BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  BucketBoundaries b;
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) b.push_back(v);
  return b;
}

template <>
MetricType Family<Counter>::type() const {
  return MetricType::kCounter;
}
template <>
MetricType Family<Gauge>::type() const {
  return MetricType::kGauge;
}
template <>
MetricType Family<Histogram>::type() const {
  return MetricType::kHistogram;
}

// Counters and gauges: one sample line per label set.
template <typename T>
void SerializeScalar(std::string& out, const std::string& name, const std::string& help, const char* type,
                     const Labels& const_labels, const std::map<Labels, std::unique_ptr<T>>& metrics) {
  Header(out, name, help, type);
  for (const auto& [labels, m] : metrics) {
    out += name;
    AppendLabels(out, const_labels, labels);
    out += ' ';
    out += FormatValue(m->Value());
    out += '\n';
  }
}

template <>
void Family<Counter>::Serialize(std::string& out) const {
  std::lock_guard<std::mutex> g(mu_);
  SerializeScalar(out, name_, help_, "counter", const_labels_, metrics_);
}

template <>
void Family<Gauge>::Serialize(std::string& out) const {
  std::lock_guard<std::mutex> g(mu_);
  SerializeScalar(out, name_, help_, "gauge", const_labels_, metrics_);
}

template <>
void Family<Histogram>::Serialize(std::string& out) const {
  Header(out, name_, help_, "histogram");
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& [labels, m] : metrics_) {
    auto s = m->Collect();
    for (size_t i = 0; i <= s.bounds.size(); ++i) {
      std::string le = i < s.bounds.size() ? FormatValue(s.bounds[i]) : "+Inf";
      out += name_;
      out += "_bucket";
      AppendLabels(out, const_labels_, labels, &le);
      out += ' ';
      out += std::to_string(s.cumulative[i]);
      out += '\n';
    }
    out += name_;
    out += "_sum";
    AppendLabels(out, const_labels_, labels);
    out += ' ';
    out += FormatValue(s.sum);
    out += '\n';
    out += name_;
    out += "_count";
    AppendLabels(out, const_labels_, labels);
    out += ' ';
    out += std::to_string(s.count);
    out += '\n';
  }
}

void Registry::Insert(std::unique_ptr<FamilyBase> family, const Labels& const_labels) {
  if (!IsValidMetricName(family->name())) throw std::invalid_argument("invalid metric name: " + family->name());
  for (const auto& [k, v] : const_labels)
    if (!IsValidLabelName(k)) throw std::invalid_argument("invalid label name: " + k);
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& f : families_)
    if (f->name() == family->name()) throw std::invalid_argument("duplicate metric family: " + family->name());
  families_.push_back(std::move(family));
}

void Registry::AddCollectHook(std::function<void()> hook) {
  std::lock_guard<std::mutex> g(mu_);
  hooks_.push_back(std::move(hook));
}

std::string Registry::Serialize() const {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& h : hooks_) h();
  std::string out;
  out.reserve(4096);
  for (const auto& f : families_) f->Serialize(out);
  return out;
}

bool IsValidMetricName(const std::string& n) {
  if (n.empty()) return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool IsValidLabelName(const std::string& n) {
  if (n.empty() || n.rfind("__", 0) == 0 || n == "le") return false;
  for (size_t i = 0; i < n.size(); ++i) {
    char c = n[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

namespace {
// Backslash and newline always; the double quote only inside label values.
std::string Escape(const std::string& v, bool quote) {
  std::string o;
  o.reserve(v.size());
  for (char c : v) {
    if (c == '\\')
      o += "\\\\";
    else if (c == '\n')
      o += "\\n";
    else if (quote && c == '"')
      o += "\\\"";
    else
      o += c;
  }
  return o;
}
}  // namespace

std::string EscapeLabelValue(const std::string& v) { return Escape(v, true); }

std::string EscapeHelp(const std::string& v) { return Escape(v, false); }

namespace {
// The fields of /proc/self/stat, numbered as proc(5) does (fields[1] is the
// pid, fields[2] the command); fields 1 and 2 are not parsed. Empty on error.
std::vector<std::string> ReadProcSelfStat() {
  std::ifstream f("/proc/self/stat");
  std::string line;
  std::getline(f, line);
  auto rp = line.rfind(')');  // the command may contain spaces and ')'
  if (rp == std::string::npos || rp + 2 > line.size()) return {};
  std::vector<std::string> fields(3);
  std::istringstream is(line.substr(rp + 2));
  std::string tok;
  while (is >> tok) fields.push_back(tok);
  return fields;
}
}  // namespace

void RegisterProcessMetrics(Registry& registry) {
  auto& cpu = BuildCounter()
                  .Name("process_cpu_seconds_total")
                  .Help("Total user and system CPU time spent in seconds.")
                  .Register(registry)
                  .Add({});
  auto& rss = BuildGauge()
                  .Name("process_resident_memory_bytes")
                  .Help("Resident memory size in bytes.")
                  .Register(registry)
                  .Add({});
  auto& vsz = BuildGauge()
                  .Name("process_virtual_memory_bytes")
                  .Help("Virtual memory size in bytes.")
                  .Register(registry)
                  .Add({});
  auto& start = BuildGauge()
                    .Name("process_start_time_seconds")
                    .Help("Start time of the process since unix epoch in seconds.")
                    .Register(registry)
                    .Add({});
  auto& fds = BuildGauge().Name("process_open_fds").Help("Number of open file descriptors.").Register(registry).Add({});
  auto& maxfds =
      BuildGauge().Name("process_max_fds").Help("Maximum number of open file descriptors.").Register(registry).Add({});

  const long ticks = sysconf(_SC_CLK_TCK);
  const long page = sysconf(_SC_PAGESIZE);
  double boot_time = 0;
  {
    std::ifstream st("/proc/stat");
    std::string key;
    while (st >> key) {
      if (key == "btime") {
        st >> boot_time;
        break;
      }
    }
  }
  // The start time does not change: read it once (field 22, in clock ticks
  // since boot).
  if (auto fields = ReadProcSelfStat(); fields.size() > 22)
    start.Set(boot_time + std::stod(fields[22]) / static_cast<double>(ticks));
  registry.AddCollectHook([&cpu, &rss, &vsz, &fds, &maxfds, ticks, page] {
    // utime 14, stime 15 (ticks); vsize 23 (bytes); rss 24 (pages).
    if (auto fields = ReadProcSelfStat(); fields.size() > 24) {
      double total = (std::stod(fields[14]) + std::stod(fields[15])) / static_cast<double>(ticks);
      double delta = total - cpu.Value();
      if (delta > 0) cpu.Increment(delta);
      vsz.Set(std::stod(fields[23]));
      rss.Set(std::stod(fields[24]) * static_cast<double>(page));
    }
    std::error_code ec;
    double n = 0;
    for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
         !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
      ++n;
    fds.Set(n);
    struct rlimit rl {};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) maxfds.Set(static_cast<double>(rl.rlim_cur));
  });
}

}  // namespace ms::metrics
