#include "shared/process/open_files.h"

#include <sys/resource.h>

namespace ms::process {

void RaiseOpenFileLimit() {
  if (rlimit nofile{}; getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
}

}  // namespace ms::process
