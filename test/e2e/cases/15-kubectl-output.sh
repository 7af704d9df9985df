# What kubectl v1.34 prints, as a user sees it.
# README.md: every fenced block right after the line
# `<!-- checked by test/e2e/cases/15-kubectl-output.sh -->` starts with
# `$ kubectl ...`, followed by that command's output. The command is run as
# written, from the repository's root (so relative paths are the README's),
# in the default namespace, with the suite's kubectl, and must print exactly
# the rest of the block (stdout and stderr).
# timeout: 60
# logs: webhook
readme="$E2E_ROOT/README.md"
marker='<!-- checked by test/e2e/cases/15-kubectl-output.sh -->'
blocks="$(mktemp -d "$E2E_WORK/readme-blocks.XXXXXX")"
# One file per marked block: its lines between the fences.
awk -v dir="$blocks" -v marker="$marker" '
  $0 == marker { marked = 1; next }
  marked && !inblock && /^```/ { inblock = 1; n++; file = sprintf("%s/%02d", dir, n); printf "" > file; next }
  marked && !inblock { marked = 0 }                  # the marker must be followed by the block
  inblock && /^```$/ { inblock = 0; marked = 0; close(file); next }
  inblock { print > file }
' "$readme"
markers="$(grep -cxF "$marker" "$readme")"
found=("$blocks"/*)
[[ -e "${found[0]}" ]] || fail "no block marked '$marker' in README.md"
assert_eq "${#found[@]}" "$markers" "README blocks found after the markers"

kubectl() { "$KUBECTL" "$@"; }  # the command as written, with the suite's v1.34 kubectl
before="$(k -n default get ms -o name)"
for f in "${found[@]}"; do
  cmd="$(head -n 1 "$f")"
  [[ "$cmd" == '$ kubectl '* ]] || fail "README block $(basename "$f") does not start with '\$ kubectl ': $cmd"
  expected="$(tail -n +2 "$f")"
  [[ -n "$expected" ]] || fail "README block for '$cmd' shows no output"
  actual="$(cd "$E2E_ROOT" && eval "${cmd#\$ }" 2>&1)" || true
  [[ "$actual" == "$expected" ]] \
    || fail "README.md shows for '$cmd':\n$expected\nkubectl prints:\n$actual"
  log "ok: README's '$cmd' prints what README.md shows"
done
# The examples are rejections: they left nothing behind.
assert_eq "$(k -n default get ms -o name)" "$before" "ModelServices in the default namespace after the README's commands"
