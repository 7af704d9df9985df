# What kubectl v1.34 prints, as a user sees it.
# 1. docs/user/kubectl-walkthrough.md (the users' kubectl walkthrough): every
#    fenced block right after the line
#    `<!-- checked by test/e2e/cases/15-kubectl-output.sh -->` starts with
#    `$ kubectl ...`, followed by that command's output. The command is run as
#    written, from the repository's root (so relative paths are the page's
#    repository paths),
#    in the default namespace, with the suite's kubectl, and must print the
#    rest of the block (stdout and stderr; tabs expanded and trailing blanks
#    dropped on both sides, since editors do that to a page).
# 2. `kubectl explain modelservice.PATH` for every object of the schema
#    (shared/api/schema/modelservice.schema.json: the root, spec, spec.strategy,
#    spec.strategy.rollingUpdate, spec.autoscaling, spec.rollout, status,
#    status.conditions): a description of the object and of every field it
#    lists, each the schema's text (the root's apiVersion, kind and metadata
#    are described by the API server itself).
# timeout: 180
# logs: webhook
page="$E2E_ROOT/docs/user/kubectl-walkthrough.md"
marker='<!-- checked by test/e2e/cases/15-kubectl-output.sh -->'
blocks="$(mktemp -d "$E2E_WORK/walkthrough-blocks.XXXXXX")"
# One file per marked block: its lines between the fences.
awk -v dir="$blocks" -v marker="$marker" '
  $0 == marker { marked = 1; next }
  marked && !inblock && /^```/ { inblock = 1; n++; file = sprintf("%s/%02d", dir, n); printf "" > file; next }
  marked && !inblock { marked = 0 }                  # the marker must be followed by the block
  inblock && /^```$/ { inblock = 0; marked = 0; close(file); next }
  inblock { print > file }
' "$page"
markers="$(grep -cxF "$marker" "$page")"
found=("$blocks"/*)
[[ -e "${found[0]}" ]] || fail "no block marked '$marker' in docs/user/kubectl-walkthrough.md"
assert_eq "${#found[@]}" "$markers" "walkthrough blocks found after the markers"
# A denial by the webhook, one by the CRD's schema, kubectl explain: at least
# these three stay on the page.
(( markers >= 3 )) || fail "docs/user/kubectl-walkthrough.md has $markers checked blocks, fewer than the 3 it had"

kubectl() { "$KUBECTL" "$@"; }  # the command as written, with the suite's v1.34 kubectl
before="$(k -n default get ms -o name | tr "\n" " ")"
for f in "${found[@]}"; do
  cmd="$(head -n 1 "$f")"
  [[ "$cmd" == '$ kubectl '* ]] || fail "walkthrough block $(basename "$f") does not start with '\$ kubectl ': $cmd"
  expected="$(tail -n +2 "$f")"
  [[ -n "$expected" ]] || fail "walkthrough block for '$cmd' shows no output"
  actual="$(cd "$E2E_ROOT" && eval "${cmd#\$ }" 2>&1)" || true
  normalize() { expand | sed 's/[[:space:]]*$//'; }
  expected="$(normalize <<<"$expected")" actual="$(normalize <<<"$actual")"
  [[ "$actual" == "$expected" ]] \
    || fail "docs/user/kubectl-walkthrough.md shows for '$cmd':\n$expected\nkubectl prints:\n$actual"
  log "ok: the walkthrough's '$cmd' prints what the page shows"
done
# The examples are rejections: they left nothing behind.
assert_eq "$(k -n default get ms -o name | tr "\n" " ")" "$before" "ModelServices in the default namespace after the walkthrough's commands"

# ------------------------------------------------------------ kubectl explain
# One Python program walks the schema, runs kubectl explain for each object,
# prints one "ok: ..." line per object checked and one "FAIL: ..." line per
# difference (descriptions compared with whitespace folded: kubectl wraps).
report="$(python3 - "$E2E_ROOT/shared/api/schema/modelservice.schema.json" "$KUBECTL" <<'PY' 2>&1
import json, re, subprocess, sys

schema = json.load(open(sys.argv[1]))
fold = lambda s: " ".join(s.split())

def objects(node, path, description):
    """(kubectl explain path, the object's description, its fields) for each object with fields."""
    if "properties" in node:
        yield path, description, node["properties"]
        for name, sub in node["properties"].items():
            yield from objects(sub, path + "." + name, sub.get("description", ""))
    items = node.get("items")
    if isinstance(items, dict):
        # kubectl shows an array's description, then its items'.
        yield from objects(items, path, description + " " + items.get("description", ""))

checked = 0
for path, description, fields in objects(schema, "modelservice", schema.get("description", "")):
    out = subprocess.run([sys.argv[2], "explain", path], capture_output=True, text=True)
    text = out.stdout + out.stderr
    problems = []
    if out.returncode != 0:
        problems.append("exit status %d" % out.returncode)
    if "<no description>" in text or "<empty>" in text:
        problems.append("shows <no description> or <empty>")
    head, _, body = text.partition("\nFIELDS:\n")
    shown = fold(head.partition("\nDESCRIPTION:\n")[2])
    if shown != fold(description):
        problems.append("DESCRIPTION: kubectl shows %r, the schema says %r" % (shown, fold(description)))
    # A field: "  name<TAB><type>...", an optional "  enum: ..." line, then its
    # description indented by 4.
    listed = {m.group(1): fold(m.group(2)) for m in
              re.finditer(r"^  (\w+)\t<.*\n(?:  enum: .*\n)?((?:    .*\n)*)", body + "\n", re.M)}
    if sorted(listed) != sorted(fields):
        problems.append("fields: kubectl lists %s, the schema has %s" % (sorted(listed), sorted(fields)))
    for name, sub in fields.items():
        if path == "modelservice" and name in ("apiVersion", "kind", "metadata"):
            continue  # the API server describes these itself
        if listed.get(name) != fold(sub.get("description", "")):
            problems.append("%s: kubectl shows %r, the schema says %r" % (name, listed.get(name), fold(sub.get("description", ""))))
    for p in problems:
        print("FAIL: kubectl explain %s: %s" % (path, p))
    if not problems:
        print("ok: kubectl explain %s describes the object and its %d fields as the schema does" % (path, len(fields)))
    checked += 1
print("checked %d objects" % checked)
PY
)" || fail "the kubectl explain check did not run: $report"
while IFS= read -r line; do log "$line"; done <<<"$report"
[[ "$report" != *"FAIL: "* ]] || fail "kubectl explain differs from the schema (see above)"
# Every object of the schema with properties (69 since the model servers'
# pod contract: probes, ports, volumes, securityContext): none skipped.
assert_contains "$report" "checked 69 objects" "objects checked"
