#!/usr/bin/env bash
# start-no-thread.sh TEST_BINARY... - fails unless each test binary, and every
# process it starts, runs without starting a thread: strace -f records every
# clone, and none may carry CLONE_THREAD. The tests marked ONE_THREAD in
# test/*/CMakeLists.txt are left out of the ThreadSanitizer build on that
# ground (test/CMakeLists.txt); this keeps the mark true.
set -euo pipefail
command -v strace >/dev/null || { echo "start-no-thread: strace not found (scripts/setup.sh installs it)" >&2; exit 1; }
trace="$(mktemp)"
trap 'rm -f "$trace"' EXIT
bad=0
for bin in "$@"; do
  if ! strace -f -qq -e trace=clone,clone3 -o "$trace" "$bin" >/dev/null 2>&1; then
    echo "start-no-thread: $bin failed (run it alone to see why)" >&2
    bad=1
    continue
  fi
  threads="$(grep -c CLONE_THREAD "$trace" || true)"
  if ((threads > 0)); then
    echo "start-no-thread: $(basename "$bin") started $threads thread(s): it is marked ONE_THREAD, so TSan never runs it; move it to SOURCES" >&2
    bad=1
  else
    echo "start-no-thread: $(basename "$bin"): no thread"
  fi
done
exit "$bad"
