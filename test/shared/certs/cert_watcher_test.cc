// The certwatcher metrics and warnings of the webhook's files: every read
// counted, failures counted and the gauge kept at the last good pair,
// warnings logged once per threshold as virtual time passes.
#include "shared/certs/cert_watcher.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>

#include "shared/log/logging.h"
#include "test/support/fake_clock.h"
#include "test/support/test_support.h"

namespace ms::certs {
namespace {

using namespace std::chrono_literals;
constexpr auto kDay = std::chrono::hours(24);

// One sample: a counter, or the expiry gauge of `certificate`; -1 when absent.
double Value(metrics::Registry& registry, const std::string& name, const std::string& certificate = "serving") {
  for (const auto& f : registry.families().Collect()) {
    if (f.name != name) continue;
    for (const auto& m : f.metric) {
      if (f.type == prometheus::MetricType::Counter) return m.counter.value;
      if (m.label.size() == 1 && m.label[0].value == certificate) return m.gauge.value;
    }
  }
  return -1;
}
constexpr const char* kExpiry = "modelservice_webhook_certificate_expiration_timestamp_seconds";

KeyPairPem SelfSigned(WallTime not_after) {
  KeyPairPem p;
  p.key_pem = NewPrivateKey();
  p.cert_pem = Issue({"wh.ns.svc", {"wh.ns.svc"}, false, not_after - 90 * kDay, not_after}, p.key_pem, nullptr);
  return p;
}

TEST(CertWatcher, CountsReadsAndErrorsAndWarnsBeforeExpiry) {
  test::TempDir dir;
  FakeClock clock;
  std::ostringstream log;
  auto logger = log::MakeLogger("webhook", log::Format::kText, spdlog::level::info,
                                std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  metrics::Registry registry;
  CertWatcherMetrics metrics(registry);
  const WallTime end = std::chrono::floor<std::chrono::seconds>(clock.WallNow() + 40 * kDay);
  const KeyPairPem pair = SelfSigned(end);
  test::WriteFile(dir.File("tls.crt"), pair.cert_pem);
  test::WriteFile(dir.File("tls.key"), pair.key_pem);
  CertWatcher watcher(dir.File("tls.crt"), dir.File("tls.key"), metrics, logger, clock);

  EXPECT_TRUE(watcher.ReadOnce());
  EXPECT_EQ(Value(registry, "certwatcher_read_certificate_total"), 1);
  EXPECT_EQ(Value(registry, "certwatcher_read_certificate_errors_total"), 0);
  const double expiry = std::chrono::duration_cast<std::chrono::seconds>(end.time_since_epoch()).count();
  EXPECT_EQ(Value(registry, kExpiry), expiry);
  logger->flush();
  EXPECT_EQ(log.str(), "");  // 40 days left

  // A key that does not match (a rotation caught half-way): an error, the gauge stays.
  // Read again unchanged (the verdict on the same bytes is kept, not made
  // again): still an error each time.
  test::WriteFile(dir.File("tls.key"), NewPrivateKey());
  EXPECT_FALSE(watcher.ReadOnce());
  EXPECT_FALSE(watcher.ReadOnce());
  std::remove(dir.File("tls.crt").c_str());
  EXPECT_FALSE(watcher.ReadOnce());
  EXPECT_EQ(Value(registry, "certwatcher_read_certificate_total"), 4);
  EXPECT_EQ(Value(registry, "certwatcher_read_certificate_errors_total"), 3);
  EXPECT_EQ(Value(registry, kExpiry), expiry);

  test::WriteFile(dir.File("tls.crt"), pair.cert_pem);
  test::WriteFile(dir.File("tls.key"), pair.key_pem);
  clock.Advance(10 * kDay + 1s);  // 30 days left
  EXPECT_TRUE(watcher.ReadOnce());
  EXPECT_TRUE(watcher.ReadOnce());
  logger->flush();
  const std::string text = log.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  EXPECT_NE(text.find("serving certificate CN=wh.ns.svc"), std::string::npos) << text;
  EXPECT_NE(text.find("expires in 29 days"), std::string::npos) << text;
}

TEST(CertWatcher, TheClientCaBundleUntilItsLastCaExpires) {
  test::TempDir dir;
  FakeClock clock;
  std::ostringstream log;
  auto logger = log::MakeLogger("webhook", log::Format::kText, spdlog::level::info,
                                std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  metrics::Registry registry;
  CertWatcherMetrics metrics(registry);
  const WallTime now = std::chrono::floor<std::chrono::seconds>(clock.WallNow());
  const KeyPairPem pair = SelfSigned(now + 90 * kDay);
  test::WriteFile(dir.File("tls.crt"), pair.cert_pem);
  test::WriteFile(dir.File("tls.key"), pair.key_pem);
  // An old client CA ending in 3 days and its successor in 20.
  test::WriteFile(dir.File("client-ca.crt"),
                  SelfSigned(now + 3 * kDay).cert_pem + SelfSigned(now + 20 * kDay).cert_pem);
  CertWatcher watcher(dir.File("tls.crt"), dir.File("tls.key"), metrics, logger, clock, dir.File("client-ca.crt"));
  EXPECT_TRUE(watcher.ReadOnce());
  EXPECT_EQ(Value(registry, kExpiry, "client-ca"),
            std::chrono::duration_cast<std::chrono::seconds>((now + 20 * kDay).time_since_epoch()).count());
  EXPECT_EQ(Value(registry, "certwatcher_read_certificate_total"), 1);  // the serving pair only
  logger->flush();
  EXPECT_NE(log.str().find("client CA (--client-ca) CN=wh.ns.svc"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("expires in 20 days"), std::string::npos) << log.str();
  // No client CA file: no series.
  metrics::Registry other;
  CertWatcherMetrics other_metrics(other);
  CertWatcher plain(dir.File("tls.crt"), dir.File("tls.key"), other_metrics, nullptr, clock);
  plain.ReadOnce();
  EXPECT_EQ(Value(other, kExpiry, "client-ca"), -1);
}

TEST(CertWatcher, ReadsOnItsOwnThreadEveryInterval) {
  test::TempDir dir;
  FakeClock clock;
  metrics::Registry registry;
  CertWatcherMetrics metrics(registry);
  const KeyPairPem pair = SelfSigned(clock.WallNow() + 90 * kDay);
  test::WriteFile(dir.File("tls.crt"), pair.cert_pem);
  test::WriteFile(dir.File("tls.key"), pair.key_pem);
  CertWatcher watcher(dir.File("tls.crt"), dir.File("tls.key"), metrics, nullptr, clock);
  watcher.Start(1s);
  EXPECT_EQ(Value(registry, "certwatcher_read_certificate_total"), 1);  // at once
  // Each second of virtual time, one more read (the watcher's thread waits again after it).
  for (int i = 1; i <= 3; ++i) {
    clock.Advance(1s);
    EXPECT_TRUE(clock.Eventually([&] { return Value(registry, "certwatcher_read_certificate_total") >= 1 + i; }));
    EXPECT_EQ(Value(registry, "certwatcher_read_certificate_total"), 1 + i);
  }
  watcher.Stop();
}

}  // namespace
}  // namespace ms::certs
