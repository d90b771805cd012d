"""Tables and plots of docs/scale.md (libpac inside ns-3), rendered from
docs/data/scale-ns3-*.csv (bench/ns3/run's and bench/ns3/leaf-spine-run's
results.csv) by tools/render-docs."""


def finished(row):
    """The rounds a run finished ("2/3": 2; 0 when not recorded)."""
    rounds = row.get("rounds", "")
    return int(rounds.split("/")[0]) if rounds else 0


def after(key, rounds):
    """The value of 'key', or "" (shown "-") when the run finished fewer
    rounds than the figure needs (FCT: one, warm goodput: two), as
    bench/ns3/run's own table has it."""
    return lambda row: row[key] if finished(row) >= rounds else ""


def pair(a, b):
    """"A / B" of two count columns, "-" when either is not recorded."""
    def value(row):
        if row[a] == "" or row[b] == "":
            return "-"
        return f"{INT(float(row[a]))} / {INT(float(row[b]))}"
    return value


def side_by_side(schemes, metrics, first="senders"):
    """The sender count, then each metric for each scheme in turn (the
    head names the metric over its first scheme's column)."""
    cols = [Col(first, first, {"scheme": schemes[0]}, fmt=INT)]
    for head, value, fmt in metrics:
        for i, s in enumerate(schemes):
            cols.append(Col(f"{head} {s}" if i == 0 else s, value,
                            {"scheme": s}, fmt=fmt))
    return cols


def incast_metrics(fct_fmt):
    return [("goodput", "goodput_mbps", F1),
            ("warm", after("warm_goodput_mbps", 2), F1),
            ("sender RTOs", "timeouts", INT),
            ("receiver RTOs", "rcv_timeouts", INT),
            ("FCT p99 ms", after("fct_p99_ms", 1), fct_fmt),
            ("drops", "drops", INT)]


def ceiling_share(row):
    """Goodput as % of the link's TCP ceiling: 1 448 payload bytes in
    each 1 502-byte frame."""
    ceiling = float(row["rate_gbps"]) * 1000 * 1448 / 1502
    return 100 * float(row["goodput_mbps"]) / ceiling


def at_rate(rate):
    return {"rate_gbps": rate}


# The leaf-spine's schemes: PAC ran twice, at an 80 KB threshold and at
# the buffer (pac_threshold).
LS = [("tcp", {"scheme": "tcp"}), ("dctcp", {"scheme": "dctcp"}),
      ("pac 80 KB", {"scheme": "pac", "pac_threshold": "80000"}),
      ("pac 96 KB", {"scheme": "pac", "pac_threshold": "96000"})]


def leaf_spine(metrics, schemes):
    cols = [Col("senders", "senders", agg="first", fmt=INT),
            Col("load", "load", agg="first")]
    for head, value, fmt in metrics:
        for i, (name, where) in enumerate(schemes):
            cols.append(Col(f"{head} {name}" if i == 0 else name, value,
                            where, fmt=fmt))
    return cols


class Share(Col):
    """The sender counts at which PAC's goodput is at or above (below)
    90 % of the ceiling, and their goodputs: "N..M: lo-hi" above, each
    N with its goodput and share below."""

    def __init__(self, head, above):
        super().__init__(head, "goodput_mbps", agg="list", align="l")
        self.above = above

    def cell(self, rows):
        rows = sorted((r for r in rows
                       if (ceiling_share(r) >= 90) == self.above),
                      key=lambda r: int(r["senders"]))
        if not rows:
            return "none"
        n = [INT(int(r["senders"])) for r in rows]
        g = [float(r["goodput_mbps"]) for r in rows]
        if self.above:
            return f"{n[0]}..{n[-1]}: {INT(min(g))}-{INT(max(g))}"
        return ", ".join(f"{k}: {INT(x)} ({F1(ceiling_share(r))} %)"
                         for k, x, r in zip(n, g, rows))


class Pairs(Col):
    """The sums of the two counts of pair() over the rows."""

    def cell(self, rows):
        a, b = self.value
        return (f"{INT(sum(int(r[a]) for r in rows))} / "
                f"{INT(sum(int(r[b]) for r in rows))}")


TESTBED_64K = {"mode": "pac", "bytes_per_sender": "65536"}

TABLES = [
    Table("scale-ns3-1g", "scale-ns3-1g.csv", rows="senders",
          cols=side_by_side(["tcp", "dctcp", "pac"], incast_metrics(F1))),
    Table("scale-ns3-1g-copies",
          ["scale-ns3-1g.csv", "scale-ns3-1g-4096.csv",
           "scale-ns3-1g-no-copies.csv"],
          rows="senders",
          where={"scheme": "pac",
                 "senders": ("512", "1024", "2048", "4096")},
          cols=[Col("senders", "senders", agg="first", fmt=INT),
                Col("goodput, copies", "goodput_mbps",
                    {"file": lambda f: f != "scale-ns3-1g-no-copies"},
                    fmt=F1),
                Col("none", "goodput_mbps",
                    {"file": "scale-ns3-1g-no-copies"}, fmt=F1),
                Col("receiver RTOs, copies", "rcv_timeouts",
                    {"file": lambda f: f != "scale-ns3-1g-no-copies"},
                    fmt=INT),
                Col("none", "rcv_timeouts",
                    {"file": "scale-ns3-1g-no-copies"}, fmt=INT),
                Col("queue max KB, copies", "queue_max_kb",
                    {"file": lambda f: f != "scale-ns3-1g-no-copies"},
                    fmt=F1),
                Col("none", "queue_max_kb",
                    {"file": "scale-ns3-1g-no-copies"}, fmt=F1),
                Col("drops, copies", "drops",
                    {"file": lambda f: f != "scale-ns3-1g-no-copies"},
                    fmt=INT)]),
    Table("scale-ns3-10g", "scale-ns3-10g.csv", rows="senders",
          cols=side_by_side(["tcp", "dctcp", "pac"], incast_metrics(F2))),
    Table("scale-ns3-40g", "scale-ns3-40g.csv", rows="senders",
          cols=side_by_side(["tcp", "dctcp", "pac"], incast_metrics(F2))),
    Table("scale-ns3-target",
          ["scale-ns3-1g.csv", "scale-ns3-1g-4096.csv",
           "scale-ns3-10g.csv", "scale-ns3-40g.csv"],
          rows="rate_gbps", where={"scheme": "pac"},
          cols=[Col("rate", lambda r: f"{r['rate_gbps']} Gbit/s",
                    agg="first"),
                Share("at or above 90 %: senders, Mbit/s", above=True),
                Share("below 90 %: senders, Mbit/s (% of ceiling)",
                      above=False),
                Pairs("RTOs snd / rcv, all N",
                      ("timeouts", "rcv_timeouts"))]),
    Table("scale-ns3-peers-1g", "scale-ns3-peers-1g.csv", rows="senders",
          cols=side_by_side(["pac", "tcp", "rwnd", "ap"],
                            incast_metrics(F1))),
    Table("scale-ns3-rdtcp-1g", "scale-ns3-rdtcp-1g.csv", rows="senders",
          cols=side_by_side(["pac", "rdtcp"], [
              ("goodput", "goodput_mbps", F1),
              ("FCT p99 ms", after("fct_p99_ms", 1), F1),
              ("queue p99 KB", "queue_p99_kb", F1),
              ("drops", "drops", INT),
              ("RTOs snd / rcv", pair("timeouts", "rcv_timeouts"), RAW)])),
    Table("scale-ns3-pulser-1g", "scale-ns3-pulser-1g.csv", rows="senders",
          cols=side_by_side(["pac", "tcp", "dctcp", "pulser"],
                            incast_metrics(F1))),
    Table("scale-ns3-leaf-spine-incast", "scale-ns3-leaf-spine.csv",
          rows=("senders", "load"),
          cols=leaf_spine([
              ("incast goodput", "goodput_mbps", F1),
              ("RTOs snd / rcv", pair("timeouts", "rcv_timeouts"), RAW),
              ("bottleneck drops", "drops", INT)], LS)),
    Table("scale-ns3-leaf-spine-bg", "scale-ns3-leaf-spine.csv",
          rows=("senders", "load"),
          cols=leaf_spine([
              ("short FCT p99 ms", "short_fct_p99_ms", F2),
              ("avg ms", "short_fct_avg_ms", F2),
              ("short to receiver p99 ms", "rcv_short_fct_p99_ms", F2),
              ("long flows Mbit/s", "long_goodput_mbps", F1),
              ("drops off bottleneck", "fabric_drops", INT)], LS[:3])
          + [Col("flows to receiver (short)", "rcv_short_flows",
                 {"scheme": "tcp"}, fmt=INT)]),
    Table("scale-ns3-leaf-spine-rdtcp", "scale-ns3-leaf-spine-rdtcp.csv",
          rows=("senders", "load"),
          cols=leaf_spine([
              ("incast goodput", "goodput_mbps", F1),
              ("RTOs snd / rcv", pair("timeouts", "rcv_timeouts"), RAW),
              ("bottleneck drops", "drops", INT),
              ("short to receiver p99 ms", "rcv_short_fct_p99_ms", F2),
              ("long flows Mbit/s", "long_goodput_mbps", F1)],
              [("pac", {"scheme": "pac"}), ("rdtcp", {"scheme": "rdtcp"})])),
    Table("scale-ns3-pac-sim", "scale-ns3-pac-sim.csv", rows="senders",
          cols=[Col("senders", "senders", agg="first", fmt=INT),
                Col("PAC rounds ms, ns-3",
                    lambda r: ", ".join(r[f"round{i}_ms"] for i in (1, 2, 3)),
                    {"sim": "ns3", "scheme": "pac"}),
                Col("pac-sim p50 / max",
                    lambda r: f"{r['rct_p50_ms']} / {r['rct_max_ms']}",
                    {"sim": "pac-sim", "scheme": "pac"}),
                Col("PAC goodput ns-3", "goodput_mbps",
                    {"sim": "ns3", "scheme": "pac"}, fmt=F1),
                Col("pac-sim", "goodput_mbps",
                    {"sim": "pac-sim", "scheme": "pac"}, fmt=F1),
                Col("PAC RTOs snd / rcv ns-3",
                    pair("timeouts", "rcv_timeouts"),
                    {"sim": "ns3", "scheme": "pac"}),
                Col("pac-sim", pair("timeouts", "rcv_timeouts"),
                    {"sim": "pac-sim", "scheme": "pac"}),
                Col("plain TCP goodput ns-3", "goodput_mbps",
                    {"sim": "ns3", "scheme": "tcp"}, fmt=F1),
                Col("pac-sim", "goodput_mbps",
                    {"sim": "pac-sim", "scheme": "tcp"}, fmt=F1)]),
    Table("scale-ns3-testbed",
          ["scale-ns3-500m.csv", "peers-500m-pmd.csv",
           "peers-rdtcp-500m-pmd.csv"],
          rows="senders", where={"senders": ("16", "64", "256")},
          cols=[Col("senders", "senders", {"scheme": "pac"}, fmt=INT),
                Col("PAC goodput ns-3", "goodput_mbps", {"scheme": "pac"},
                    fmt=F1),
                Col("testbed (2 sweeps)", "goodput_mbps", TESTBED_64K,
                    agg="range", fmt=INT),
                Col("PAC RTOs snd / rcv ns-3",
                    pair("timeouts", "rcv_timeouts"), {"scheme": "pac"}),
                Col("testbed timeout rounds", "timeout_rounds", TESTBED_64K,
                    agg="range", fmt=INT),
                Col("plain goodput ns-3", "goodput_mbps", {"scheme": "tcp"},
                    fmt=F1),
                Col("testbed", "goodput_mbps",
                    {"mode": "off", "bytes_per_sender": "65536"}, fmt=INT),
                Col("plain sender RTOs ns-3", "timeouts", {"scheme": "tcp"},
                    fmt=INT),
                Col("testbed timeout rounds (of 10)", "timeout_rounds",
                    {"mode": "off", "bytes_per_sender": "65536"}, fmt=INT)]),
]


def ns3_title(rate, buffer_kb, rounds):
    """bench/ns3/run's own title for a sweep's plot."""
    return (f"ns-3 incast: {rate} Gbit/s, {buffer_kb} KB buffer, 64 KB per "
            f"sender, {rounds} rounds, linuxreno")


PLOTS = [
    Plot("scale-ns3-1g", "scale-ns3-1g.csv", "ns3", ns3_title(1, 96, 3)),
    Plot("scale-ns3-10g", "scale-ns3-10g.csv", "ns3",
         ns3_title(10, 375, "2-3")),
    Plot("scale-ns3-40g", "scale-ns3-40g.csv", "ns3",
         ns3_title(40, 1500, "2-3")),
    Plot("scale-ns3-peers-1g", "scale-ns3-peers-1g.csv", "ns3",
         ns3_title(1, 96, 3)),
    Plot("scale-ns3-rdtcp-1g", "scale-ns3-rdtcp-1g.csv", "ns3",
         ns3_title(1, 96, 3)),
    Plot("scale-ns3-pulser-1g", "scale-ns3-pulser-1g.csv", "ns3",
         ns3_title(1, 96, 3)),
]
