# go-build.lib.sh - what the scripts that build the suite's tools from a
# pinned Go module have in common (build-helm.sh, build-prometheus.sh,
# build-prometheus-adapter.sh, build-go-tool.sh). Sourced; each script defines
# log() first.
#
#   gomod_version MOD_DIR MODULE  the version MOD_DIR/go.mod requires of
#                                 MODULE (a require line or block), or nothing
#   find_go MOD_DIR               sets gocmd to a Go toolchain at least as new
#                                 as MOD_DIR/go.mod's `go` line: $GO, then go
#                                 on PATH, then /usr/local/go/bin/go; exits 1
#                                 saying so when there is none
#   go_build_lock CACHE NAME      waits for CACHE/NAME (flock, when there is
#                                 one): one builder at a time
#   go_build_env                  the build's environment: GOWORK=off,
#                                 CGO_ENABLED=0, GOFLAGS=-mod=readonly
#                                 -buildvcs=false, GOTOOLCHAIN=local

gomod_version() {
  awk -v m="$2" '($1 == m && $2 ~ /^v/) { print $2; exit } ($1 == "require" && $2 == m) { print $3; exit }' "$1/go.mod"
}

go_minor() {  # go_minor GO: the minor version of a Go toolchain (1.26.8 -> 26), or 0.
  local v
  v="$("$1" env GOVERSION 2>/dev/null)" || { echo 0; return; }
  v="${v#go1.}"; v="${v%%[!0-9]*}"
  echo "${v:-0}"
}

find_go() {
  local need cand
  need="$(awk '$1 == "go" { split($2, v, "."); print v[2]; exit }' "$1/go.mod")"
  gocmd=""
  for cand in "${GO:-}" "$(command -v go || true)" /usr/local/go/bin/go; do
    [[ -n "$cand" && -x "$(command -v "$cand" || true)" ]] || continue
    if (( $(go_minor "$cand") >= ${need:-0} )); then gocmd="$cand"; return 0; fi
  done
  log "no Go >= 1.${need:-0} found (on PATH or /usr/local/go/bin/go; set GO=/path/to/go)"
  exit 1
}

go_build_lock() {
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$1/$2"
    flock 9
  fi
}

go_build_env() {
  export GOWORK=off CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" GOTOOLCHAIN=local
}
