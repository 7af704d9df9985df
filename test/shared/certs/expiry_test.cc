// Expiry warnings in virtual time: 30 and 7 days before, and once expired,
// each once per certificate.
#include "shared/certs/expiry.h"

#include <gtest/gtest.h>

namespace ms::certs {
namespace {

using namespace std::chrono_literals;
constexpr auto kDay = std::chrono::hours(24);

Certificate Cert(const std::string& fp, WallTime not_after) {
  Certificate c;
  c.fingerprint = fp + std::string(64 - fp.size(), '0');
  c.subject = "CN=wh.ns.svc";
  c.not_after = not_after;
  return c;
}

TEST(ExpiryWarnings, ThirtyAndSevenDaysBeforeThenExpiredEachOnce) {
  ExpiryWarnings w;
  const WallTime end = WallTime{} + 1000 * kDay;
  const Certificate c = Cert("aa", end);
  EXPECT_FALSE(w.Check("serving certificate", c, end - 30 * kDay - 1s));
  auto first = w.Check("serving certificate", c, end - 30 * kDay);
  ASSERT_TRUE(first);
  EXPECT_FALSE(first->expired);
  EXPECT_EQ(first->message,
            "serving certificate CN=wh.ns.svc (sha256 aa00000000000000) expires in 30 days (720h), at "
            "1972-09-27T00:00:00Z: it has not been renewed");
  EXPECT_FALSE(w.Check("serving certificate", c, end - 20 * kDay));
  EXPECT_FALSE(w.Check("serving certificate", c, end - 7 * kDay - 1s));
  auto second = w.Check("serving certificate", c, end - 7 * kDay + 1h);
  ASSERT_TRUE(second);
  EXPECT_NE(second->message.find("expires in 6 days (167h)"), std::string::npos) << second->message;
  EXPECT_FALSE(w.Check("serving certificate", c, end - 1s));
  auto expired = w.Check("serving certificate", c, end);
  ASSERT_TRUE(expired);
  EXPECT_TRUE(expired->expired);
  EXPECT_EQ(expired->message,
            "serving certificate CN=wh.ns.svc (sha256 aa00000000000000) expired at 1972-09-27T00:00:00Z: TLS clients "
            "refuse it");
  EXPECT_FALSE(w.Check("serving certificate", c, end + kDay));
}

TEST(ExpiryWarnings, FirstSeenLateOnlyTheClosestThresholdAndPerCertificate) {
  ExpiryWarnings w;
  const WallTime now = WallTime{} + 1000 * kDay;
  auto late = w.Check("webhook CA", Cert("bb", now + 5 * kDay), now);
  ASSERT_TRUE(late);
  EXPECT_NE(late->message.find("expires in 5 days"), std::string::npos);
  EXPECT_FALSE(w.Check("webhook CA", Cert("bb", now + 5 * kDay), now + kDay));
  // A renewed certificate (another fingerprint) is warned about on its own.
  EXPECT_FALSE(w.Check("webhook CA", Cert("cc", now + 90 * kDay), now));
  EXPECT_TRUE(w.Check("webhook CA", Cert("cc", now + 90 * kDay), now + 61 * kDay));
}

}  // namespace
}  // namespace ms::certs
