"""Tables and plots of docs/benchmarks.md, rendered from docs/data/ by
tools/render-docs."""


def num(text):
    return float(text) if text not in ("", None) else None


def setting(r):
    """'1 Gbit/s, 100 KB' or '500 Mbit/s, 50 KB, `--pmd`' of a row."""
    rate = num(r["rate_mbit"])
    text = "1 Gbit/s" if rate == 1000 else f"{rate:g} Mbit/s"
    text += f", {num(r['buffer_bytes']) / 1000:g} KB"
    return text + (", `--pmd`" if r.get("ports") == "pmd" else "")


def workload(r):
    if r.get("workload") == "overlap":
        return f"overlapping, fanout {r['fanout']}"
    if num(r.get("total_bytes") or 0):
        return f"{num(r['total_bytes']) / 2**20:g} MB in all"
    return f"{num(r['bytes_per_sender']) / 1024:g} KB each"


def mbps(x):
    """Goodput: whole Mbit/s, one decimal below 100."""
    return (F1 if x < 100 else INT)(x)


def values(rows, col, mode, fmt):
    """', '-joined col of the rows of 'mode' (every run), '-' if none."""
    vals = [fmt(num(r[col])) for r in rows
            if r["mode"] == mode and r[col] != ""]
    return ", ".join(vals) if vals else "-"


def modes(col, ms, fmt=INT, of=None):
    """A cell 'x / y / ...' of col for each mode of 'ms'; with 'of' a
    column, ' of N' after it (N from the first row)."""
    def cell(rows):
        text = " / ".join(values(rows, col, m, fmt) for m in ms)
        if of and rows:
            text += f" of {rows[0][of]}"
        return text
    return cell


def by_mode(head, col, mode, fmt=INT):
    """Column 'head': col of mode's rows, every run ', '-joined."""
    return Col(head, lambda rows: values(rows, col, mode, fmt), agg="rows")


def per_senders(col, fmt):
    """'x / y': col of the rows in order of their sender counts."""
    return lambda rows: " / ".join(
        fmt(num(r[col])) for r in sorted(rows, key=lambda r: int(r["senders"])))


OVERLAP = ["overlap-500m-pmd-1.csv", "overlap-500m-pmd-2.csv",
           "overlap-1g-1.csv", "overlap-1g-2.csv", "overlap-fanout16.csv",
           "overlap-100m.csv"]
OFF_PAC = ["off", "pac"]


def pair_ratio_median(rows):
    """The median over the repetitions ('rep') of PAC's goodput over plain
    OVS's in the same repetition."""
    by_rep = {}
    for r in rows:
        by_rep.setdefault(r["rep"], {})[r["mode"]] = num(r["goodput_mbps"])
    ratios = sorted(g["pac"] / g["off"] for g in by_rep.values()
                    if g.get("off") and "pac" in g)
    n = len(ratios)
    return (ratios[n // 2] if n % 2 else
            (ratios[n // 2 - 1] + ratios[n // 2]) / 2)


def timeout_rounds_of(mode):
    """'k of n': the timeout rounds of mode's rows, of the rounds they
    did."""
    return lambda rows: ", ".join(
        f"{INT(num(r['timeout_rounds']))} of {r['rounds']}"
        for r in rows if r["mode"] == mode)


def modes_sum(col, ms):
    """'x / y': the sum of col over each mode's rows."""
    return lambda rows: " / ".join(
        INT(sum(num(r[col]) for r in rows if r["mode"] == m)) for m in ms)
PEERS = ["off", "pac", "rwnd", "ap"]

# The do-no-harm benchmark (tools/incast noharm): its cases as a reader
# names them.
def noharm_case(r):
    name = r["case"]
    answers = f"{int(r['senders']):,} × 64 KB".replace(",", " ")
    if name == "bulk":
        return "1 × 64 MB"
    if name == "long8":
        return "8 × 16 MB, 8 hosts"
    if name == "rpc":
        return "RPCs alone"
    if name == "rpc-incast":
        return f"RPCs during {answers}"
    if name.startswith("pa"):
        return f"partition-aggregate, {r['fanout']} of {r['senders']} a request"
    if name.startswith("vm-rto-"):
        return f"{answers}, VM's RTOmin {r['vm_rto_min_ms']} ms"
    if name.startswith("snd-rto-"):
        return f"{answers}, senders' RTOmin {r['rto_min_ms']} ms"
    return answers


def noharm_result(rows):
    """Goodput 'plain / PAC' (Mbit/s) and the median ratio; for the RPC
    cases the RPCs' latency 'p99, max' (ms) of each mode's runs too, alone
    for the RPCs without answers."""
    def lat(mode):
        return "; ".join(f"{F1(num(r['rpc_p99_ms']))}, "
                         f"{F1(num(r['rpc_max_ms']))}"
                         for r in rows if r["mode"] == mode)

    rpcs = (f"RPCs {lat('off')} / {lat('pac')} ms"
            if rows[0]["rpc_p99_ms"] else "")
    if rows[0]["case"] == "rpc":
        return rpcs
    goodput = (modes("goodput_mbps", OFF_PAC, mbps)(rows)
               + f" ({F2(pair_ratio_median(rows))})")
    return f"{goodput}; {rpcs}" if rpcs else goodput


def noharm_timeouts(rows):
    """Each mode's 'sender RTOs + VM RTOs', plain / PAC."""
    return " / ".join(
        "+".join(INT(sum(num(r[c]) for r in rows if r["mode"] == m))
                 for c in ("sender_rtos", "vm_timeouts"))
        for m in OFF_PAC)


NOHARM = ["noharm-1g.csv", "noharm-500m-pmd.csv"]


TABLES = [
    Table("incast-500m-pmd", "incast-500m-pmd.csv", rows="senders", cols=[
        Col("senders", "senders", {"mode": "pac"}, fmt=INT),
        Col("PAC goodput (Mbit/s)", "goodput_mbps", {"mode": "pac"}, fmt=INT),
        Col("PAC timeout rounds of 20", "timeout_rounds", {"mode": "pac"}, fmt=INT),
        Col("PAC drops", "bottleneck_drops", {"mode": "pac"}, fmt=INT),
        Col("PAC RCT p99 (ms)", "rct_p99_ms", {"mode": "pac"}, fmt=INT),
        Col("plain OVS goodput (Mbit/s)", "goodput_mbps", {"mode": "off"}, fmt=INT),
        Col("plain OVS timeout rounds of 20", "timeout_rounds", {"mode": "off"}, fmt=INT),
        Col("plain OVS sender / VM RTOs", lambda r: f"{INT(num(r['sender_rtos']))} / {r['vm_timeouts']}", {"mode": "off"}),
        Col("plain OVS drops", "bottleneck_drops", {"mode": "off"}, fmt=INT),
        Col("plain OVS RCT p99 (ms)", "rct_p99_ms", {"mode": "off"}, fmt=INT),
    ]),
    Table("past-1024", ["past-1024-1g.csv", "past-1024-500m.csv",
                        "past-1024-500m-pmd.csv"],
          rows=("file", "total_bytes"), blank_repeats=1, cols=[
        Col("rate, buffer", setting, agg="first"),
        Col("workload", workload, agg="first"),
        Col("PAC goodput at 2 048 / 4 096 senders (Mbit/s)", per_senders("goodput_mbps", F1), agg="rows"),
        Col("timeout rounds of 20", per_senders("timeout_rounds", INT), agg="rows"),
        Col("drops", per_senders("bottleneck_drops", INT), agg="rows"),
    ]),
    Table("demo-1g", "demo-1g.csv", rows="senders", cols=[
        Col("senders", "senders", agg="first", fmt=INT),
        by_mode("PAC goodput (Mbit/s)", "goodput_mbps", "pac"),
        by_mode("PAC timeout rounds of 10", "timeout_rounds", "pac"),
        by_mode("PAC drops", "bottleneck_drops", "pac"),
        by_mode("plain OVS goodput (Mbit/s)", "goodput_mbps", "off"),
        by_mode("plain OVS timeout rounds of 10", "timeout_rounds", "off"),
        Col("VM RTOs PAC / plain OVS", modes("vm_timeouts", OFF_PAC[::-1]), agg="rows"),
    ]),
    # The incast with the defaults (the fast path), 500 Mbit/s on a PMD
    # thread, one tools/incast demo run.
    Table("fast-path-500m-pmd", "fast-path-500m-pmd.csv", rows="senders",
          cols=[
        Col("senders", "senders", agg="first", fmt=INT),
        by_mode("PAC goodput (Mbit/s)", "goodput_mbps", "pac"),
        Col("PAC timeout rounds", timeout_rounds_of("pac"), agg="rows"),
        by_mode("PAC drops", "bottleneck_drops", "pac"),
        by_mode("plain OVS goodput (Mbit/s)", "goodput_mbps", "off"),
        Col("plain OVS timeout rounds", timeout_rounds_of("off"), agg="rows"),
        Col("VM RTOs PAC / plain OVS", modes("vm_timeouts", OFF_PAC[::-1]),
            agg="rows"),
    ]),
    Table("vm-demo", ["vm-demo.csv", "vm-demo-namespace.csv"], rows=("receiver", "senders"),
          blank_repeats=1, cols=[
        Col("receiver", "receiver", agg="first"),
        Col("senders", "senders", agg="first", fmt=INT),
        by_mode("PAC goodput (Mbit/s)", "goodput_mbps", "pac", F1),
        by_mode("PAC timeout rounds of 10", "timeout_rounds", "pac"),
        by_mode("PAC drops", "bottleneck_drops", "pac"),
        by_mode("plain OVS goodput (Mbit/s)", "goodput_mbps", "off", F1),
        by_mode("plain OVS timeout rounds of 10", "timeout_rounds", "off"),
        by_mode("plain OVS drops", "bottleneck_drops", "off"),
    ]),
    # Overlapping requests, 1 Gbit/s left out: the do-no-harm table has it.
    Table("overlap", OVERLAP,
          rows=("rate_mbit", "ports", "senders", "fanout", "bytes_per_sender"),
          having=lambda rows: num(rows[0]["rate_mbit"]) != 1000,
          sort=lambda r: ({"500.0": 0, "500": 0, "1000.0": 1, "1000": 1}.get(
              r["rate_mbit"], 2), r["fanout"] == "16" and r["senders"] != "64",
              int(r["senders"])),
          blank_repeats=1, cols=[
        Col("rate, buffer", setting, agg="first"),
        Col("senders", "senders", agg="first", fmt=INT),
        Col("fanout", lambda r: r["fanout"] + (" × 32 KB" if r["bytes_per_sender"] == "32768" else ""), agg="first"),
        Col("goodput off / PAC (Mbit/s)", modes("goodput_mbps", OFF_PAC, mbps), agg="rows"),
        Col("timeout requests off / PAC", modes("timeout_rounds", OFF_PAC, of="rounds"), agg="rows"),
        Col("sender RTOs off / PAC", modes("sender_rtos", OFF_PAC), agg="rows"),
        Col("VM RTOs off / PAC", modes("vm_timeouts", OFF_PAC), agg="rows"),
        Col("RCT p99 off / PAC (ms)", modes("rct_p99_ms", OFF_PAC), agg="rows"),
        Col("drops off / PAC", modes("bottleneck_drops", OFF_PAC), agg="rows"),
    ]),
    # Do no harm: every case of tools/incast noharm, plain OVS and PAC, the
    # two testbed configurations side by side.
    Table("noharm", NOHARM, rows="case", cols=[
        Col("workload", noharm_case, agg="first"),
        Col("1 Gbit/s, 100 KB: goodput plain OVS / PAC (Mbit/s; ratio)",
            noharm_result, {"file": "noharm-1g"}, agg="rows"),
        Col("sender + VM RTOs", noharm_timeouts, {"file": "noharm-1g"},
            agg="rows"),
        Col("500 Mbit/s, 50 KB, `--pmd`: goodput plain OVS / PAC",
            noharm_result, {"file": "noharm-500m-pmd"}, agg="rows"),
        Col("sender + VM RTOs", noharm_timeouts, {"file": "noharm-500m-pmd"},
            agg="rows"),
    ]),
    Table("peers", "peers-500m-pmd.csv", rows=("total_bytes", "senders"),
          blank_repeats=1, cols=[
        Col("workload", workload, agg="first"),
        Col("senders", "senders", agg="first", fmt=INT),
        Col("goodput off / PAC / rwnd / AP (Mbit/s)", modes("goodput_mbps", PEERS), agg="rows"),
        Col("timeout rounds of 10", modes("timeout_rounds", PEERS), agg="rows"),
        Col("drops", modes("bottleneck_drops", PEERS), agg="rows"),
        Col("RCT p99 (ms)", modes("rct_p99_ms", PEERS), agg="rows"),
    ]),
    Table("peers-rdtcp", "peers-rdtcp-500m-pmd.csv",
          rows=("total_bytes", "senders"), blank_repeats=1, cols=[
        Col("workload", workload, agg="first"),
        Col("senders", "senders", agg="first", fmt=INT),
        Col("goodput PAC / RDTCP (Mbit/s)", modes("goodput_mbps", ["pac", "rdtcp"]), agg="rows"),
        Col("timeout rounds of 10", modes("timeout_rounds", ["pac", "rdtcp"]), agg="rows"),
        Col("drops", modes("bottleneck_drops", ["pac", "rdtcp"]), agg="rows"),
        Col("RCT p99 (ms)", modes("rct_p99_ms", ["pac", "rdtcp"]), agg="rows"),
    ]),
    Table("pac-sim-1g", "pac-sim-1g.csv", rows="senders", cols=[
        Col("senders", "senders", agg="first", fmt=INT),
        Col("drops off / PAC", modes("drops", OFF_PAC), agg="rows"),
        Col("sender RTOs off / PAC", modes("timeouts", OFF_PAC), agg="rows"),
        Col("goodput off / PAC (Mbit/s)", modes("goodput_mbps", OFF_PAC, F1), agg="rows"),
        Col("round p99 off / PAC (ms)", lambda rows: " / ".join(
            (INT if num(r["rct_p99_ms"]) >= 10 else F1)(num(r["rct_p99_ms"]))
            for m in OFF_PAC for r in rows if r["mode"] == m), agg="rows"),
    ]),
    # tools/incast run --repeat: one bulk connection and 8 long ones, with
    # the defaults (the fast path), PAC and plain OVS alternated.
    Table("fast-path-bulk", "fast-path-bulk.csv", rows=("workload", "ports"),
          cols=[
        Col("workload", "workload", agg="first"),
        Col("ports", lambda r: ("PMD thread (`--pmd`)" if r["ports"] == "pmd"
                                else "main thread"), agg="first"),
        by_mode("plain OVS goodput (Mbit/s)", "goodput_mbps", "off"),
        by_mode("PAC goodput (Mbit/s)", "goodput_mbps", "pac"),
        by_mode("PAC tracking every connection (Mbit/s)", "goodput_mbps",
                "pac-tracked"),
        Col("PAC / plain OVS, median of each repetition's", pair_ratio_median,
            agg="rows", fmt=F2),
        Col("drops plain OVS / PAC", modes_sum("drops", OFF_PAC), agg="rows"),
        Col("timeout rounds plain OVS / PAC",
            modes_sum("timeout_rounds", OFF_PAC), agg="rows"),
    ]),
    Table("datapath-cost", "datapath-cost.csv", rows="case", cols=[
        Col("case", lambda r: f"{r['case']} (`RESULT {r['result']}`)"),
        Col("`cpp_off`", "cpp_off", fmt=INT),
        Col("`cpp_pac`", "cpp_pac", fmt=INT),
        Col("ratio", "ratio", fmt=F2),
        Col("ratio per round", lambda r: ", ".join(
            r[k] for k in r if k.startswith("ratio_r") and r[k])),
        Col("median of the rounds' ratios", "ratio_median", fmt=F2),
        Col("target", "target", fmt=F2, missing=""),
    ]),
    Table("memory", "memory.csv", rows="item", cols=[
        Col("item", "item"),
        Col("bytes", lambda r: " ".join(x for x in (INT(num(r["bytes"])) if r["bytes"] else "", r["bytes_note"]) if x)),
        Col("what", "what"),
    ]),
]

PLOTS = [
    Plot("incast-500m-pmd", "incast-500m-pmd.csv", "incast"),
    Plot("incast-1g", "incast-1g.csv", "incast"),
    Plot("overlap-500m-pmd", "overlap-500m-pmd-1.csv", "incast"),
    Plot("overlap-1g", "overlap-1g-1.csv", "incast"),
    Plot("peers-500m-pmd", "peers-500m-pmd.csv", "incast"),
    Plot("peers-rdtcp-500m-pmd", "peers-rdtcp-500m-pmd.csv", "incast"),
]
