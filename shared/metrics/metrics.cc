#include "shared/metrics/metrics.h"

#include <prometheus/client_metric.h>
#include <prometheus/metric_type.h>
#include <prometheus/text_serializer.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "shared/process/files.h"

namespace ms::metrics {

namespace {

std::string EscapeHelp(const std::string& help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

// The fields of /proc/self/stat, numbered as proc(5) does (fields[1] is the
// pid, fields[2] the command); fields 1 and 2 are not parsed. Empty on error.
std::vector<std::string> ReadProcSelfStat() {
  std::string line;
  try {
    line = process::ReadFile("/proc/self/stat");
  } catch (const std::runtime_error&) {
    return {};
  }
  auto rp = line.rfind(')');  // the command may contain spaces and ')'
  if (rp == std::string::npos || rp + 2 > line.size()) return {};
  std::vector<std::string> fields(3);
  std::istringstream is(line.substr(rp + 2));
  std::string tok;
  while (is >> tok) fields.push_back(tok);
  return fields;
}

double BootTimeSeconds() {
  std::istringstream st;
  try {
    st.str(process::ReadFile("/proc/stat"));
  } catch (const std::runtime_error&) {
    return 0;
  }
  std::string key;
  double boot_time = 0;
  while (st >> key)
    if (key == "btime") {
      st >> boot_time;
      break;
    }
  return boot_time;
}

prometheus::MetricFamily OneValue(const char* name, const char* help, prometheus::MetricType type, double value) {
  prometheus::MetricFamily family{name, help, type, {prometheus::ClientMetric{}}};
  if (type == prometheus::MetricType::Counter)
    family.metric[0].counter.value = value;
  else
    family.metric[0].gauge.value = value;
  return family;
}

}  // namespace

void Serialize(std::span<const prometheus::Collectable* const> collectables, std::ostream& out) {
  const prometheus::TextSerializer serializer;
  std::vector<prometheus::MetricFamily> families;
  for (const auto* c : collectables) {
    if (const auto* objects = dynamic_cast<const ObjectGauges*>(c)) {
      // Written a part at a time (kPartSeries series), so that a scrape never
      // holds every object's labels at once; the first part with its HELP and
      // TYPE lines, the next ones without.
      constexpr std::size_t kPartSeries = 512;
      serializer.Serialize(out, families);
      families.clear();
      bool first = true;
      objects->CollectInParts(kPartSeries, [&](prometheus::MetricFamily part) {
        part.help = EscapeHelp(part.help);
        std::vector<prometheus::MetricFamily> one;
        one.push_back(std::move(part));
        if (first) {
          serializer.Serialize(out, one);
          first = false;
          return;
        }
        std::ostringstream more;
        serializer.Serialize(more, one);
        const std::string text = std::move(more).str();
        const auto help_end = text.find('\n');
        const auto type_end = help_end == std::string::npos ? help_end : text.find('\n', help_end + 1);
        if (type_end != std::string::npos)
          out.write(text.data() + type_end + 1, static_cast<std::streamsize>(text.size() - type_end - 1));
      });
      continue;
    }
    auto collected = c->Collect();
    for (auto& f : collected) {
      f.help = EscapeHelp(f.help);
      families.push_back(std::move(f));
    }
  }
  serializer.Serialize(out, families);
}

std::string Serialize(std::span<const prometheus::Collectable* const> collectables) {
  std::ostringstream out;
  Serialize(collectables, out);
  return std::move(out).str();
}

prometheus::Histogram::BucketBoundaries ExponentialBuckets(double start, double factor, int count) {
  prometheus::Histogram::BucketBoundaries b;
  double v = start;
  for (int i = 0; i < count; ++i, v *= factor) b.push_back(v);
  return b;
}

ProcessCollector::ProcessCollector()
    : ticks_per_second_(static_cast<double>(sysconf(_SC_CLK_TCK))),
      page_bytes_(static_cast<double>(sysconf(_SC_PAGESIZE))) {
  // The start time does not change: read it once (field 22, in clock ticks
  // since boot).
  if (auto fields = ReadProcSelfStat(); fields.size() > 22)
    start_time_seconds_ = BootTimeSeconds() + std::stod(fields[22]) / ticks_per_second_;
}

std::vector<prometheus::MetricFamily> ProcessCollector::Collect() const {
  using prometheus::MetricType;
  std::vector<prometheus::MetricFamily> out;
  // utime 14, stime 15 (ticks); vsize 23 (bytes); rss 24 (pages).
  if (auto fields = ReadProcSelfStat(); fields.size() > 24) {
    out.push_back(OneValue("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
                           MetricType::Counter, (std::stod(fields[14]) + std::stod(fields[15])) / ticks_per_second_));
    out.push_back(OneValue("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
                           std::stod(fields[24]) * page_bytes_));
    out.push_back(OneValue("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
                           std::stod(fields[23])));
  }
  out.push_back(OneValue("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
                         MetricType::Gauge, start_time_seconds_));
  std::error_code ec;
  double fds = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++fds;
  out.push_back(OneValue("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, fds));
  if (rlimit rl{}; getrlimit(RLIMIT_NOFILE, &rl) == 0)
    out.push_back(OneValue("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
                           static_cast<double>(rl.rlim_cur)));
  return out;
}

CollectHooks::Handle& CollectHooks::Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    Reset();
    hooks_ = std::exchange(o.hooks_, nullptr);
    id_ = o.id_;
  }
  return *this;
}

void CollectHooks::Handle::Reset() {
  if (!hooks_) return;
  std::lock_guard<std::mutex> g(hooks_->mu_);
  hooks_->hooks_.erase(id_);
  hooks_ = nullptr;
}

CollectHooks::Handle CollectHooks::Add(std::function<void()> hook) {
  std::lock_guard<std::mutex> g(mu_);
  const uint64_t id = next_id_++;
  hooks_.emplace(id, std::move(hook));
  return Handle(this, id);
}

std::vector<prometheus::MetricFamily> CollectHooks::Collect() const {
  std::lock_guard<std::mutex> g(mu_);
  for (const auto& [id, hook] : hooks_) hook();
  return {};
}

ObjectGauges& Registry::AddObjectGauges(std::string name, std::string help, std::vector<std::string> series_labels) {
  std::lock_guard<std::mutex> g(objects_mu_);
  if (std::any_of(objects_.begin(), objects_.end(), [&](const ObjectGauges& o) { return o.name() == name; }))
    throw std::invalid_argument("metric family " + name + " is registered twice");
  return objects_.emplace_back(std::move(name), std::move(help), std::move(series_labels));
}

std::vector<const prometheus::Collectable*> Registry::Collectables() const {
  std::vector<const prometheus::Collectable*> out{&process_, &hooks_, &families_};
  std::lock_guard<std::mutex> g(objects_mu_);
  for (const auto& o : objects_) out.push_back(&o);
  return out;
}

}  // namespace ms::metrics
