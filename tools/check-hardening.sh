#!/usr/bin/env bash
# check-hardening.sh - fail unless every given ELF binary carries the
# hardening the Release build promises (CMakeLists.txt, MS_HARDEN):
#   PIE            ELF type DYN with the PIE flag (readelf -h / -d)
#   full RELRO     a GNU_RELRO segment (readelf -l) and immediate binding
#                  (BIND_NOW, or NOW in FLAGS/FLAGS_1; readelf -d)
#   stack protector  the binary calls __stack_chk_fail (readelf --dyn-syms)
#   FORTIFY_SOURCE   the binary calls checked libc functions (__*_chk)
#   no executable stack  GNU_STACK is RW, not RWE (readelf -l)
#   control-flow protection  main() begins with a landing pad (objdump -d):
#                  endbr64 on x86-64 (-fcf-protection), bti or paciasp on
#                  arm64 (-mbranch-protection); the ELF property note that
#                  would say so for the whole binary is dropped by the linker
#                  when any object lacks it (Debian's crt files do)
# Stack-clash protection and the FORTIFY_SOURCE level leave no mark in the
# ELF file; with --compile-commands FILE the script also checks that every
# compile command of the project's own sources carries
# -fstack-clash-protection, -fstack-protector-strong, -D_FORTIFY_SOURCE=3
# and -fcf-protection=full or -mbranch-protection=standard (CMake writes the
# file as compile_commands.json in the build directory).
#
# Usage: tools/check-hardening.sh [--compile-commands FILE] BINARY...
# Output: one line per binary and check; exit 1 if any check fails.
set -euo pipefail

cc=""
if [[ "${1:-}" == --compile-commands ]]; then cc="$2"; shift 2; fi
(( $# )) || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }

fail=0
check() {  # check BINARY WHAT CONDITION-RESULT
  if [[ "$3" == yes ]]; then echo "check-hardening: $1: $2: ok"
  else echo "check-hardening: $1: $2: MISSING" >&2; fail=1; fi
}
has() { if grep -Eq "$1"; then echo yes; else echo no; fi; }

for bin in "$@"; do
  [[ -f "$bin" ]] || { echo "check-hardening: $bin: no such file" >&2; fail=1; continue; }
  name="$(basename "$bin")"
  header="$(readelf -hW "$bin")"
  dynamic="$(readelf -dW "$bin")"
  segments="$(readelf -lW "$bin")"
  dynsyms="$(readelf -sW --dyn-syms "$bin")"
  check "$name" "PIE" "$( { grep -E '^\s*Type:' <<<"$header"; grep -E 'FLAGS_1' <<<"$dynamic"; } | tr '\n' ' ' | has 'DYN.*PIE')"
  check "$name" "RELRO" "$(has 'GNU_RELRO' <<<"$segments")"
  check "$name" "BIND_NOW" "$(has '\(BIND_NOW\)|\(FLAGS\).*NOW|\(FLAGS_1\).*NOW' <<<"$dynamic")"
  check "$name" "stack protector" "$(has '__stack_chk_fail' <<<"$dynsyms")"
  check "$name" "FORTIFY_SOURCE" "$(has '__[a-z0-9_]+_chk(@|$| )' <<<"$dynsyms")"
  check "$name" "non-executable stack" "$(grep -E 'GNU_STACK' <<<"$segments" | has 'RW ')"
  check "$name" "control-flow protection" \
    "$(objdump -d --disassemble=main "$bin" 2>/dev/null | grep -A2 '<main>:' | has 'endbr64|bti|paciasp')"
done

if [[ -n "$cc" ]]; then
  python3 - "$cc" <<'PY' || fail=1
import json, sys
root_cmds = json.load(open(sys.argv[1]))
need = ["-fstack-clash-protection", "-fstack-protector-strong", "-D_FORTIFY_SOURCE=3"]
bad = []
for c in root_cmds:
    src = c["file"]
    if "/test/" in src or "/bench/" in src or "/build" in src:
        continue
    cmd = c.get("command") or " ".join(c.get("arguments", []))
    missing = [n for n in need if n not in cmd]
    if "-fcf-protection=full" not in cmd and "-mbranch-protection=standard" not in cmd:
        missing.append("-fcf-protection=full")
    if missing:
        bad.append(f"{src}: {' '.join(missing)}")
if bad:
    print("check-hardening: compile commands without the hardening flags:", file=sys.stderr)
    print("\n".join(bad[:20]), file=sys.stderr)
    sys.exit(1)
print(f"check-hardening: {len(root_cmds)} compile commands: hardening flags ok")
PY
fi
exit "$fail"
