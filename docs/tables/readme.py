"""The summary table of README.md ("Today's figures"), rendered from the
CSVs of docs/benchmarks.md by tools/render-docs."""

SETTINGS = {
    "demo-1g": "`tools/demo`: 1 Gbit/s, 100 KB buffer",
    "incast-500m-pmd": "`tools/incast sweep`: 500 Mbit/s, 50 KB, ports on a PMD thread",
    "past-1024-1g": "past 1 024 senders: 1 Gbit/s and 500 Mbit/s (PAC only)",
    "past-1024-500m": "past 1 024 senders: 1 Gbit/s and 500 Mbit/s (PAC only)",
    "past-1024-500m-pmd": "past 1 024 senders: 1 Gbit/s and 500 Mbit/s (PAC only)",
    "ovn-demo": "`tools/demo --ovn`: OVN, 1 Gbit/s, 100 KB",
    "vm-demo": "`tools/demo --vm`: a libvirt guest, 100 Mbit/s, 10 KB",
}


def of_mode(mode):
    return lambda rows: [r for r in rows if r["mode"] == mode]


def timeout_rounds(mode):
    """'k of n': timeout rounds of every run of 'mode' in the group."""
    def cell(rows):
        rs = of_mode(mode)(rows)
        if not rs:
            return "-"
        k = sum(int(r["timeout_rounds"]) for r in rs)
        n = sum(int(r["rounds"]) for r in rs)
        return f"{INT(k)} of {INT(n)}"
    return cell


def senders(rows):
    ns = sorted({int(r["senders"]) for r in rows})
    if len(ns) > 3:
        return f"{INT(ns[0])}-{INT(ns[-1])}"
    return ", ".join(INT(n) for n in ns)


TABLES = [
    Table("readme-figures",
          ["demo-1g.csv", "incast-500m-pmd.csv", "past-1024-1g.csv",
           "past-1024-500m.csv", "past-1024-500m-pmd.csv", "ovn-demo.csv",
           "vm-demo.csv"],
          rows=lambda r: SETTINGS[r["file"]],
          where={"bytes_per_sender": "65536"},
          cols=[
        Col("setting", lambda r: SETTINGS[r["file"]], agg="first"),
        Col("senders", senders, agg="rows"),
        Col("PAC goodput (Mbit/s)", "goodput_mbps", {"mode": "pac"}, agg="range", fmt=INT),
        Col("PAC timeout rounds", timeout_rounds("pac"), agg="rows"),
        Col("plain goodput (Mbit/s)", "goodput_mbps", {"mode": "off"}, agg="range", fmt=INT),
        Col("plain timeout rounds", timeout_rounds("off"), agg="rows"),
    ]),
]
