// No client address can lock the API server out of the webhook (issue 41):
// the probes of that review, against the real program with its default
// limits, each from hostile loopback addresses (127.0.0.2, 127.0.0.3) while
// the API server's address (127.0.0.4, or curl's 127.0.0.1) must be served.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "shared/process/files.h"
#include "test/webhook/raw_tls.h"
#include "test/webhook/webhook_process.h"

namespace ms::webhook {
namespace {

using test::Fetch;
using test::WebhookBinary;

constexpr const char* kReview = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
  "uid":"from-the-api-server","operation":"CREATE","namespace":"default","name":"x","kind":{"group":"modelops.dev",
  "version":"v1","kind":"ModelService"},"object":{"apiVersion":"modelops.dev/v1","kind":"ModelService",
  "metadata":{"name":"x"},"spec":{"model":"m"}}}})";

std::string Post(const std::string& body) {
  return "POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

// A plain TCP connection from `source` to 127.0.0.1:`port` that sends nothing.
int Tcp(const char* source, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in from{};
  from.sin_family = AF_INET;
  inet_pton(AF_INET, source, &from.sin_addr);
  bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(static_cast<uint16_t>(port));
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to);
  return fd;
}

struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) close(fd);
  }
};

class Lockout : public WebhookBinary {
 protected:
  void SetUp() override {
    WebhookBinary::SetUp();
    // A connection the server closed must fail a write here, not end the test.
    signal(SIGPIPE, SIG_IGN);
    // A few thousand sockets on the test's side.
    rlimit r{};
    getrlimit(RLIMIT_NOFILE, &r);
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
  // The API server's review, from 127.0.0.4: its answer's first line and
  // whether it carried the review's uid.
  std::string ApiServerReview(bool client_certificate = false) {
    RawTls apiserver(port_, "127.0.0.4");
    if (client_certificate) apiserver.UseCertificate(dir_.File("kube-apiserver.crt"), dir_.File("kube-apiserver.key"));
    if (!apiserver.Handshake() || !apiserver.Write(Post(kReview))) return "no connection";
    const std::string answer = apiserver.ReadResponses(1);
    if (answer.find("\"uid\":\"from-the-api-server\"") == std::string::npos) return answer.substr(0, answer.find('\r'));
    return answer.substr(0, answer.find('\r')) + " with the uid";
  }
};

// 500 idle TLS connections from each of two addresses filled the 1,000
// places; the API server's next connection was closed at once.
TEST_F(Lockout, IdleTlsConnectionsFromTwoAddressesDoNotLockOutTheApiServer) {
  Spawn(StandardArgs());
  ASSERT_TRUE(WaitReady()) << process::ReadFile(dir_.File("log.txt"));
  std::vector<std::unique_ptr<RawTls>> held;
  for (const char* from : {"127.0.0.2", "127.0.0.3"}) {
    for (int i = 0; i < 500; ++i) {
      held.push_back(std::make_unique<RawTls>(port_, from));
      held.back()->Handshake();  // then idle
    }
  }
  EXPECT_EQ(ApiServerReview(), "HTTP/1.1 200 OK with the uid");
}

// With --client-ca, 1,000 plain TCP connections that never send a
// ClientHello held every place for 10 s each, renewed at will.
TEST_F(Lockout, HandshakesNeverStartedDoNotLockOutTheApiServer) {
  auto certs = ms::test::Run(std::string("bash ") + MS_SOURCE_DIR + "/certs-scripts/gen-certs.sh --out " + dir_.path() +
                             " --ip 127.0.0.1 --reuse-ca --client kube-apiserver");
  ASSERT_EQ(certs.exit_code, 0) << certs.output;
  auto args = StandardArgs();
  args.insert(args.end(), {"--client-ca", dir_.File("ca.crt")});
  Spawn(args);
  ASSERT_TRUE(WaitReady()) << process::ReadFile(dir_.File("log.txt"));
  Fds silent;
  for (const char* from : {"127.0.0.2", "127.0.0.3"})
    for (int i = 0; i < 500; ++i) silent.fds.push_back(Tcp(from, port_));
  // Connections are accepted in order: once a later one's handshake has
  // been answered, the server has taken in every one before it.
  RawTls last(port_, "127.0.0.3");
  last.Handshake();
  EXPECT_EQ(ApiServerReview(true), "HTTP/1.1 200 OK with the uid");
}

// Six connections per address announcing 16 MiB of bodies (6 x 2,796,202
// bytes) and sending nothing held the whole 32 MiB budget of bodies in
// flight: the API server's review got 503. Now an address may hold a quarter of it, and an announced
// body that does not come is answered 408 after the body timeout (2 s).
TEST_F(Lockout, BodiesAnnouncedAndNotSentDoNotLockOutTheApiServer) {
  Spawn(StandardArgs());
  ASSERT_TRUE(WaitReady()) << process::ReadFile(dir_.File("log.txt"));
  std::vector<std::unique_ptr<RawTls>> stalled;
  std::vector<std::string> answers;
  for (const char* from : {"127.0.0.2", "127.0.0.3"}) {
    for (int i = 0; i < 6; ++i) {
      stalled.push_back(std::make_unique<RawTls>(port_, from));
      RawTls& c = *stalled.back();
      ASSERT_TRUE(c.Handshake());
      // 100-continue: the server answers once it has read the head and
      // reserved the body (or refused it).
      ASSERT_TRUE(
          c.Write("POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Expect: 100-continue\r\nContent-Length: 2796202\r\n\r\n"));
      const std::string first = c.ReadResponses(1);
      answers.push_back(first.substr(0, first.find('\r')));
    }
  }
  EXPECT_EQ(ApiServerReview(), "HTTP/1.1 200 OK with the uid");
  // 8 MiB per address: three bodies of each address reserved, the others 503.
  const std::vector<std::string> per_address = {"HTTP/1.1 100 Continue",
                                                "HTTP/1.1 100 Continue",
                                                "HTTP/1.1 100 Continue",
                                                "HTTP/1.1 503 Service Unavailable",
                                                "HTTP/1.1 503 Service Unavailable",
                                                "HTTP/1.1 503 Service Unavailable"};
  std::vector<std::string> expected = per_address;
  expected.insert(expected.end(), per_address.begin(), per_address.end());
  EXPECT_EQ(answers, expected);
  // The reserved ones time out at the body timeout and give their place back.
  const std::string timed_out = stalled[0]->ReadResponses(1);
  EXPECT_NE(timed_out.find("HTTP/1.1 408 Request Timeout\r\n"), std::string::npos) << timed_out;
  EXPECT_NE(timed_out.find("request body not received within 2000ms of its head"), std::string::npos);
}

// 2,000 idle connections from one address to the probe port made /healthz
// fail for 5 s: the kubelet reads that as a dead container.
TEST_F(Lockout, IdleConnectionsToTheProbePortDoNotFailTheKubeletsProbe) {
  Spawn(StandardArgs());
  ASSERT_TRUE(WaitReady()) << process::ReadFile(dir_.File("log.txt"));
  Fds idle;
  for (int i = 0; i < 2000; ++i) idle.fds.push_back(Tcp("127.0.0.2", probes_));
  // Accepted in order: an answer on a later connection means the server
  // has taken in every one before it.
  const int last = Tcp("127.0.0.2", probes_);
  const std::string get = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  send(last, get.data(), get.size(), MSG_NOSIGNAL);
  char buf[256];
  (void)!recv(last, buf, sizeof buf, 0);
  close(last);
  std::string body;
  EXPECT_EQ(Fetch("http://127.0.0.1:" + std::to_string(probes_) + "/healthz", &body), 200);
  EXPECT_EQ(body, "ok\n");
}

}  // namespace
}  // namespace ms::webhook
