"""Tables of docs/libpac.md, rendered from docs/data/ by tools/render-docs."""


def num(text):
    return float(text) if text not in ("", None) else None


def setting(r):
    """'1 Gbit/s, 100 KB' of a row."""
    rate = num(r["rate_mbit"])
    text = "1 Gbit/s" if rate == 1000 else f"{rate:g} Mbit/s"
    return text + f", {num(r['buffer_bytes']) / 1000:g} KB"


def senders(rows):
    r = rows[0]
    if r["workload"] == "bulk":
        return f"1 × {num(r['bytes_per_sender']) / 2**20:g} MB (bulk)"
    return " / ".join(INT(num(x["senders"])) for x in rows
                      if x["mode"] == "pac")


def of_mode(col, mode, fmt):
    """'x / y / ...': col of the rows of 'mode', in the data's order (one
    per sender count); '-' if none."""
    def cell(rows):
        vals = [fmt(num(r[col])) for r in rows
                if r["mode"] == mode and r[col] != ""]
        return " / ".join(vals) if vals else "-"
    return cell


def timeouts(rows):
    """Sender RTOs and VM timeouts of the fast path's rows, in all."""
    return INT(sum(num(r["timeouts"]) + num(r["vm_timeouts"])
                   for r in rows if r["mode"] == "pac-fast"))


TABLES = [
    Table("fast-path-sim", "fast-path-sim.csv",
          rows=("workload", "rate_mbit"), cols=[
        Col("setting", setting, agg="first"),
        Col("senders", senders, agg="rows"),
        Col("goodput PAC (Mbit/s)", of_mode("goodput_mbps", "pac", F1),
            agg="rows"),
        Col("goodput fast path", of_mode("goodput_mbps", "pac-fast", F1),
            agg="rows"),
        Col("plain OVS", of_mode("goodput_mbps", "off", F1), agg="rows"),
        Col("RTOs + VM timeouts, fast path", timeouts, agg="rows"),
        Col("drops PAC / fast path", lambda rows: " / ".join(
            str(sum(int(r["drops"]) for r in rows if r["mode"] == m))
            for m in ("pac", "pac-fast")), agg="rows"),
        Col("tracking starts", of_mode("tracking_starts", "pac-fast", INT),
            agg="rows"),
    ]),
]
