"""Tables, CSV files and plots of incast runs (incast_testbed.RunResult),
rounds and overlapping requests alike (for the latter a "round" is a
request)."""

from __future__ import annotations

import csv
import dataclasses
import typing
from pathlib import Path
from typing import Iterable, Optional

from .incast_testbed import MODES, RunResult, TestbedConfig

STYLES = {"off": "o--", "pac": "s-", "pac-tracked": "s:", "rwnd": "D-.",
          "rdtcp": "x-", "ap": "^:"}


def label(mode: str, cfg: TestbedConfig) -> str:
    """"plain OVS", "OVS + PAC", "OVS + receiver window", "plain OVS, AP
    senders" (or OVN, with --ovn)."""
    switch = cfg.switch_name()
    return {"off": f"plain {switch}", "pac": f"{switch} + PAC",
            "pac-tracked": f"{switch} + PAC, every connection tracked",
            "rwnd": f"{switch} + receiver window",
            "rdtcp": f"{switch} + RDTCP scheduler",
            "ap": f"plain {switch}, AP senders"}[mode]


def modes_of(results: Iterable[RunResult]) -> list[str]:
    """The modes that 'results' have, in MODES' order."""
    present = {r.mode for r in results}
    return [m for m in MODES if m in present]


def workload_name(r: RunResult) -> str:
    """Rounds: "64 KB per sender", "1 MB in total"; overlapping requests:
    "overlap, 64 KB" (per answer), "overlap, 1 MB" (per request).  The
    table's and the plot's "rounds" are requests for the latter."""
    if r.workload == "overlap":
        if r.bytes_per_sender:
            return f"overlap, {r.bytes_per_sender // 1024} KB"
        return f"overlap, {r.total_bytes / 2**20:g} MB"
    if r.bytes_per_sender:
        return f"{r.bytes_per_sender // 1024} KB per sender"
    return f"{r.total_bytes / 2**20:g} MB in total"


def table(results: list[RunResult]) -> str:
    """One line per workload and sender count, every mode side by side."""
    modes = modes_of(results) or ["off", "pac"]
    metrics = [("goodput Mbit/s", 7, lambda r: f"{r.goodput_mbps:.1f}"),
               ("timeout rounds", 7,
                lambda r: f"{r.timeout_rounds}/{r.rounds}"),
               ("VM RTOs", 6, lambda r: str(r.vm_timeouts)),
               ("RCT p99 ms", 7, lambda r: f"{r.rct_p99_ms:.1f}"),
               ("drops", 6, lambda r: str(r.bottleneck_drops)),
               # Connections that gave up (or could not be set up: "setup").
               ("failed conns", 6,
                lambda r: "setup" if r.setup_failed else str(r.errors))]
    rows: dict[tuple[str, int], dict[str, RunResult]] = {}
    for r in results:
        rows.setdefault((workload_name(r), r.senders), {})[r.mode] = r
    head, sub = f"{'workload':<18} {'senders':>7} |", f"{'':<18} {'':>7} |"
    for name, width, _ in metrics:
        span = len(modes) * (width + 1) - 1
        head += f" {name:>{span}} |"
        sub += " " + " ".join(f"{m:>{width}}" for m in modes) + " |"
    head += f" {'max held':>8}"
    lines = [head, sub, "-" * len(head)]
    for (wl, n), by_mode in rows.items():
        line = f"{wl:<18} {n:>7} |"
        for _, width, get in metrics:
            line += " " + " ".join(
                f"{get(by_mode[m]) if m in by_mode else '-':>{width}}"
                for m in modes) + " |"
        held = by_mode["pac"].max_held if "pac" in by_mode else "-"
        lines.append(line + f" {held if held is not None else '-':>8}")
    return "\n".join(lines)


def write_csv(results: Iterable[RunResult], path: Path,
              cfg: TestbedConfig) -> None:
    results = list(results)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [dict(r.as_row(), rate_mbit=cfg.rate_mbit,
                 buffer_bytes=cfg.buffer_bytes, threshold=cfg.threshold(),
                 max_hold=cfg.pac_max_hold or "",
                 pac_options=" ".join(cfg.pac_option_words()),
                 ports="pmd" if cfg.pmd else "main",
                 switch=cfg.switch_name().lower(),
                 receiver="libvirt guest" if cfg.vm else "namespace")
            for r in results]
    if not rows:
        return
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def results_from_rows(rows: Iterable[dict[str, str]]
                      ) -> tuple[list[RunResult], TestbedConfig]:
    """The runs of a CSV that write_csv() wrote (read as strings), and the
    testbed's configuration as its first row gives it: what plot() needs
    to draw a committed sweep again."""
    hints = typing.get_type_hints(RunResult)
    results = []
    rows = list(rows)
    for row in rows:
        kwargs = {}
        for f in dataclasses.fields(RunResult):
            text = row.get(f.name)
            kind = hints[f.name]
            if text is None or kind in (list, dict):
                continue        # Per-round lists, PAC's counters: not rows.
            if text == "":
                kwargs[f.name] = None if kind == Optional[float] or \
                    kind == Optional[int] else f.default
            elif kind in (int, Optional[int]):
                kwargs[f.name] = int(float(text))
            elif kind in (float, Optional[float]):
                kwargs[f.name] = float(text)
            elif kind is bool:
                kwargs[f.name] = text == "True"
            else:
                kwargs[f.name] = text
        results.append(RunResult(**kwargs))
    first = rows[0] if rows else {}
    cfg = TestbedConfig(
        rate_mbit=float(first.get("rate_mbit") or 1000),
        buffer_bytes=int(first.get("buffer_bytes") or 100_000),
        pac_threshold=int(first["threshold"]) if first.get("threshold")
        else None,
        pmd=first.get("ports") == "pmd",
        ovn=first.get("switch") == "ovn",
        vm=first.get("receiver") == "libvirt guest",
        pac_other_config=dict(w.split("=", 1) for w in
                              (first.get("pac_options") or "").split()))
    return results, cfg


def plot_rows(rows: list[dict[str, str]], path: Path,
              title: Optional[str] = None) -> Optional[Path]:
    """plot() of the runs a CSV of write_csv() holds."""
    results, cfg = results_from_rows(rows)
    return plot(results, path, cfg, title or None)


def plot(results: list[RunResult], path: Path, cfg: TestbedConfig,
         title: Optional[str] = None) -> Optional[Path]:
    """Goodput, timeout ratio, the VM's own RTOs and RCT p99 vs. senders,
    every mode; one column per workload.  Returns None (and says why) without
    matplotlib."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no plot: python3-matplotlib is not installed "
              "(tools/install-deps installs it)")
        return None
    workloads = list(dict.fromkeys(workload_name(r) for r in results))
    fig, axes = plt.subplots(4, len(workloads), squeeze=False,
                             figsize=(5.5 * len(workloads), 11.5),
                             sharex="col")
    # TCP payload share of what tbf counts (frames without preamble).
    ceiling = cfg.rate_mbit * 1448 / 1514
    for col, wl in enumerate(workloads):
        for mode in MODES:
            style = STYLES[mode]
            rs = sorted((r for r in results
                         if workload_name(r) == wl and r.mode == mode),
                        key=lambda r: r.senders)
            if not rs:
                continue
            n = [r.senders for r in rs]
            name = label(mode, cfg)
            axes[0][col].plot(n, [r.goodput_mbps for r in rs], style,
                              label=name)
            axes[1][col].plot(n, [r.timeout_rounds / max(r.rounds, 1)
                                  for r in rs], style, label=name)
            axes[2][col].plot(n, [r.vm_timeouts for r in rs], style,
                              label=name)
            axes[3][col].plot(n, [r.rct_p99_ms for r in rs], style,
                              label=name)
        axes[0][col].axhline(ceiling, color="grey", lw=0.8, ls=":",
                             label="TCP goodput of the link")
        axes[0][col].set_title(wl)
        axes[0][col].set_ylabel("goodput (Mbit/s)")
        axes[0][col].set_ylim(bottom=0)
        axes[1][col].set_ylabel("requests with a timeout"
                                if wl.startswith("overlap")
                                else "rounds with a timeout")
        axes[1][col].set_ylim(-0.05, 1.05)
        axes[2][col].set_ylabel("VM's own RTOs per run")
        axes[2][col].set_ylim(bottom=0)
        axes[3][col].set_ylabel("request completion p99 (ms)")
        axes[3][col].set_yscale("log")
        axes[3][col].set_xlabel("senders")
        for ax in axes[:, col]:
            ax.set_xscale("log", base=2)
            ax.grid(True, which="both", alpha=0.3)
        axes[0][col].legend(fontsize="small")
    pac_options = "".join(f", {w}" for w in cfg.pac_option_words())
    switch = "OVN" if cfg.ovn else "Open vSwitch"
    fig.suptitle(title or (f"TCP incast through {switch}\nbottleneck "
                           f"{cfg.rate_mbit:g} Mbit/s, "
                           f"{cfg.buffer_bytes // 1000} KB buffer, RTOmin "
                           f"{cfg.rto_min_ms} ms"
                           + (", ports on a PMD thread" if cfg.pmd else "")
                           + (", into a libvirt guest (qemu TCG)"
                              if cfg.vm else "")
                           + "\nPAC threshold "
                           f"{cfg.threshold()} B{pac_options}"),
                 fontsize="medium")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
