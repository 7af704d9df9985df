// Built without any hardening (test/hardening/CMakeLists.txt): the input on
// which tools/check-hardening.sh must fail. It copies through a buffer so
// that, if the flags were on, the compiler would emit the checks the script
// looks for.
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  char buf[64];
  std::strncpy(buf, argc > 1 ? argv[1] : "probe", sizeof buf - 1);
  buf[sizeof buf - 1] = '\0';
  std::printf("%s\n", buf);
  return 0;
}
