"""The figures of docs/operator.md ("Security": tools/incast hostile),
rendered from docs/data/hostile-*.csv by tools/render-docs."""

import statistics

OFF_PAC = ["off", "pac"]


def attack_name(r):
    """An attack as a reader names it."""
    kind, _, rate = r["attack"].partition("-")
    per_s = f"{int(rate or 0):,}/s".replace(",", " ")
    if kind == "none":
        return "none"
    if kind == "syn":
        return f"spoofed SYNs, {per_s}"
    if kind == "silent":
        return f"silent connections, {per_s}"
    return "1-byte drips, no MSS option, 4 × 2 000/s"


def median(rows, col, mode):
    vals = [float(r[col]) for r in rows if r["mode"] == mode and r[col]]
    return statistics.median(vals) if vals else None


def victim(rows):
    """'plain / PAC' median victim goodput (Mbit/s), and each mode's median
    share of its goodput without an attack."""
    if not rows:
        return "-"
    g = " / ".join(INT(median(rows, "victim_mbps", m)) for m in OFF_PAC)
    if rows[0]["attack"] == "none":
        return g
    kept = " / ".join(F2(median(rows, "kept", m)) for m in OFF_PAC)
    return f"{g} (kept {kept})"


def connect(rows):
    """'plain / PAC': the worst p99 and the max of the client's handshakes
    (ms), and failed ones if any."""
    def one(m):
        mine = [r for r in rows if r["mode"] == m]
        text = (f"{F1(max(float(r['connect_p99_ms']) for r in mine))}, "
                f"{F1(max(float(r['connect_max_ms']) for r in mine))}")
        failed = sum(int(r["connect_failed"]) for r in mine)
        return text + (f" ({failed} failed)" if failed else "")
    return " / ".join(one(m) for m in OFF_PAC) if rows else "-"


CONFIGS = [("hostile-100m", "100 Mbit/s, 100 KB"),
           ("hostile-1g", "1 Gbit/s, 100 KB"),
           ("hostile-500m-pmd", "500 Mbit/s, 50 KB, `--pmd`")]

cols = [Col("attack", attack_name, agg="first", align="l")]
for name, setting in CONFIGS:
    cols += [
        Col(f"{setting}: victim plain OVS / PAC (Mbit/s)", victim,
            {"file": name}, agg="rows"),
        Col("connect p99, max: plain / PAC (ms)", connect, {"file": name}, agg="rows"),
    ]

TABLES = [
    Table("hostile", [f"{name}.csv" for name, _ in CONFIGS], rows="attack",
          cols=cols),
]
