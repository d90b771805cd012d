"""Tables of docs/benchmarks.md, rendered from docs/data/ by
tools/render-docs."""

TABLES = [
    Table("incast-500m-pmd", "incast-500m-pmd.csv", rows="senders", cols=[
        Col("senders", "senders", fmt=INT, where={"mode": "pac"}),
        Col("PAC goodput (Mbit/s)", "goodput_mbps", {"mode": "pac"}, fmt=INT),
        Col("PAC timeout rounds", "timeout_rounds", {"mode": "pac"}, fmt=INT),
        Col("plain OVS goodput (Mbit/s)", "goodput_mbps", {"mode": "off"}, fmt=INT),
        Col("plain OVS drops", "bottleneck_drops", {"mode": "off"}, fmt=INT),
    ]),
]

PLOTS = [Plot("incast-500m-pmd", "incast-500m-pmd.csv", "incast")]
