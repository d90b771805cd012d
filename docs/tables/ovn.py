"""The figures of docs/ovn.md (tools/demo --ovn), rendered from
docs/data/ovn-demo.csv by tools/render-docs."""


def runs(col, mode):
    """col of every run of 'mode', ' / '-joined in run order."""
    def cell(rows):
        vals = [INT(float(r[col])) for r in rows
                if r["mode"] == mode and r[col] != ""]
        return " / ".join(vals) if vals else "-"
    return cell


TABLES = [
    Table("ovn-demo", "ovn-demo.csv", rows="senders", cols=[
        Col("senders", "senders", agg="first", fmt=INT),
        Col("OVN + PAC goodput (Mbit/s)", runs("goodput_mbps", "pac"), agg="rows"),
        Col("timeout rounds of 10", runs("timeout_rounds", "pac"), agg="rows"),
        Col("drops", runs("bottleneck_drops", "pac"), agg="rows"),
        Col("VM RTOs (third run)", "vm_timeouts", {"mode": "pac", "run": "3"}, fmt=INT),
        Col("plain OVN goodput (Mbit/s)", runs("goodput_mbps", "off"), agg="rows"),
        Col("timeout rounds of 10", runs("timeout_rounds", "off"), agg="rows"),
        Col("VM RTOs (third run)", "vm_timeouts", {"mode": "off", "run": "3"}, fmt=INT),
    ]),
]
