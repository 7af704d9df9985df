"""The Markdown report."""
import subprocess

from common import env

# ---------------------------------------------------------------- report

def mib(kb):
    return "-" if kb is None else f"{kb / 1024:.1f}"


def write_report(path, args, st, chk, timings, rss_rows, quiet, nc_final):
    L = []
    L.append("# Chaos soak report\n")
    L.append(f"- seed: `{args.seed}`, minutes: {args.minutes}, clients: {args.clients}, ModelServices at most: {args.max_ms}")
    L.append(f"- replay: `test/soak/run.sh --minutes {args.minutes:g} --seed {args.seed}`")
    L.append(f"- controller: `{subprocess.run([env('CONTROLLER_BIN'), '--version'], capture_output=True, text=True).stdout.strip()}`")
    L.append(f"- result: **soak: {st.ops} operations, {len(st.faults)} faults, {len(st.violations)} violations**\n")
    L.append("## Timings\n")
    for k, v in timings:
        L.append(f"- {k}: {v}")
    L.append("\n## Operations\n")
    L.append("| operation | outcomes |")
    L.append("|---|---|")
    for kind in sorted(st.op_kinds):
        L.append(f"| {kind} | " + ", ".join(f"{o} x{n}" for o, n in sorted(st.op_kinds[kind].items())) + " |")
    L.append("\nInvalid objects count as refused with any non-2xx answer (422 from the webhook or the schema, "
             "or 500 while the webhook was unreachable: failurePolicy Fail); an admitted one is a violation.\n")
    L.append("## Valid operations refused\n")
    L.append("Answers other than 2xx and 404 to valid operations (transport errors, counted above, left out), "
             "with quoted names elided: what users saw during the faults.\n")
    L.append("| operation | answer | count |")
    L.append("|---|---|---|")
    for (kind, why), n in sorted(st.refusals.items(), key=lambda kv: -kv[1])[:25]:
        L.append(f"| {kind} | {why.replace('|', '/')} | {n} |")
    L.append("")
    L.append("## Faults\n")
    L.append("| at (s) | fault | took (s) | what happened |")
    L.append("|---|---|---|---|")
    for f in st.faults:
        L.append(f"| {f['t']} | {f['kind']} | {f['seconds']} | {f['detail']} |")
    L.append("\n## Exits the supervisor saw (and restarted)\n")
    for t, name, pid, why in st.exits:
        L.append(f"- +{t}s {name} (pid {pid}): {why}")
    if not st.exits:
        L.append("- none")
    L.append("\n## Invariants\n")
    L.append(f"- checks while running and at the end: {chk.rounds} rounds, {chk.snapshots} consistent snapshots "
             f"(ModelServices, Deployments, Services, HPAs listed at one resourceVersion), "
             f"{chk.validated} stored ModelServices validated with `modelservice-webhook validate`")
    L.append(f"- audit log: {len(chk.audit.writes)} controller writes and {len(chk.audit.lease)} successful Lease writes read; "
             "each write must come from the Lease's holder, before its renewal + 10 s")
    L.append(f"- convergence after the faults stopped: {dict(timings).get('convergence', '-')}")
    L.append(f"- controller writes during the 30 s quiet period: {quiet}")
    L.append("\n| program | processes | max RSS MiB | first third MiB | last third MiB | growth ok |")
    L.append("|---|---|---|---|---|---|")
    for r in rss_rows:
        L.append(f"| {r['name']} | {r['pids']} | {mib(r['max_kb'])} | {mib(r['first_kb'])} | {mib(r['last_kb'])} | "
                 f"{'NO' if r['violation'] else 'yes'} |")
    L.append("\nRSS (VmRSS from /proc, every 5 s): the median of the first third of the run against the median of the "
             "last third, counting only processes past their first 30 s; growth beyond 25 % and 16 MiB is a violation. "
             "'-' means no process of that program lived through the whole third (the faults restarted it).\n")
    L.append("## Violations\n")
    if not st.violations:
        L.append("None.")
    for v in st.violations:
        L.append(f"- +{v['t']}s **{v['what']}**\n\n```\n{v['evidence']}\n```")
    if nc_final:
        L.append("\n### ModelServices not converged\n")
        for k, why in sorted(nc_final.items()):
            L.append(f"- {k}: {why}")
    L.append("\n## Timeline\n")
    for t, text in st.events:
        L.append(f"- +{t}s {text}")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
