"""The do-no-harm benchmark (`tools/incast noharm`): what PAC costs the
VM's traffic, PAC and plain OVS alternated on one testbed.

Each case is a workload and the RTOmin of the senders and of the VM it runs
with (Testbed.set_rto_min(), on the live testbed).  The cases:

  bulk           one connection, 3 rounds of 64 MB
  long8          8 connections on 8 hosts, 3 rounds of 16 MB each
  rpc            the VM's short RPCs alone: 50 a second for 4 s, each a new
                 connection, a 16-byte request and a 2 KB answer
  rpc-incast     the same RPCs during an incast of 256 x 64 KB (10 rounds)
  pa16, pa64     partition-aggregate: 80 requests at Poisson times, each to
                 16 (64) of 256 connections drawn at random, 64 KB answers,
                 half the bottleneck's rate offered
  vm-rto-M-N     the incast of N x 64 KB with the VM's RTOmin M ms
  snd-rto-M-N    the same with the senders' RTOmin M ms
  incast-N       the incast of N x 64 KB, RTOmin 200 ms on both sides: the
                 regression points

Every run prints one RESULT line (case=, mode= and its figures); the CSV has
a row per run (run()), and the modes' order alternates from one case
and repetition to the next, so that neither always runs first.
"""

from __future__ import annotations

import csv
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from .incast_testbed import RunResult, Testbed, Workload

ANSWER = 65536


@dataclass
class Case:
    name: str
    workload: Workload
    rto_min_ms: int = 200               # The senders'.
    vm_rto_min_ms: Optional[int] = None  # The VM's (None: the kernel's).


def cases(rounds: int = 10) -> list[Case]:
    """Every case, in the order they run."""
    out = [
        Case("bulk", Workload(1, 3, bytes_per_sender=64 << 20)),
        Case("long8", Workload(8, 3, bytes_per_sender=16 << 20)),
        Case("rpc", Workload(0, rpc_rps=50)),
        Case("rpc-incast", Workload(256, rounds, bytes_per_sender=ANSWER,
                                    rpc_rps=50)),
        Case("pa16", Workload(256, 80, bytes_per_sender=ANSWER,
                              overlap=True, fanout=16)),
        Case("pa64", Workload(256, 80, bytes_per_sender=ANSWER,
                              overlap=True, fanout=64)),
    ]
    for senders in (256, 1024):
        incast = Workload(senders, rounds, bytes_per_sender=ANSWER)
        out += [Case(f"vm-rto-{ms}-{senders}", incast, vm_rto_min_ms=ms)
                for ms in (1, 5, 10)]
        out += [Case(f"snd-rto-{ms}-{senders}", incast, rto_min_ms=ms)
                for ms in (5, 10)]
    out += [Case(f"incast-{n}", Workload(n, rounds, bytes_per_sender=ANSWER))
            for n in (64, 256, 1024)]
    return out


def _matches(case: Case, name: str) -> bool:
    """Whether 'name' names 'case': its name, or a prefix of it and '*'."""
    return case.name == name or (name.endswith("*")
                                 and case.name.startswith(name[:-1]))


def select(all_cases: list[Case], names: Optional[list[str]]) -> list[Case]:
    """The cases named (a name may end in '*': every case it begins), in
    the order of 'all_cases'; all of them without names."""
    if not names:
        return all_cases
    unknown = [n for n in names if not any(_matches(c, n) for c in all_cases)]
    if unknown:
        raise ValueError(f"no case {', '.join(unknown)}; the cases: "
                         + ", ".join(c.name for c in all_cases))
    return [c for c in all_cases if any(_matches(c, n) for n in names)]


def fmt_ms(x: Optional[float]) -> str:
    return "-" if x is None else f"{x:.2f}"


def result_line(case: Case, r: RunResult) -> str:
    return (f"RESULT case={case.name} mode={r.mode} senders={r.senders} "
            f"goodput_mbps={r.goodput_mbps:.1f} "
            f"timeout_rounds={r.timeout_rounds} rounds={r.rounds} "
            f"sender_rtos={r.sender_rtos} vm_timeouts={r.vm_timeouts} "
            f"rct_p99_ms={r.rct_p99_ms:.1f} drops={r.bottleneck_drops} "
            f"rpcs={r.rpcs} rpc_failed={r.rpc_failed} "
            f"rpc_retransmitted={r.rpc_retransmitted} "
            f"rpc_p50_ms={fmt_ms(r.rpc_p50_ms)} "
            f"rpc_p99_ms={fmt_ms(r.rpc_p99_ms)} "
            f"rpc_max_ms={fmt_ms(r.rpc_max_ms)}")


CSV_FIELDS = ["case", "rep", "mode", "rate_mbit", "buffer_bytes", "ports",
              "rto_min_ms", "vm_rto_min_ms", "senders", "workload", "fanout",
              "bytes_per_sender", "rounds", "goodput_mbps", "timeout_rounds",
              "sender_rtos", "vm_timeouts", "setup_vm_timeouts",
              "rct_p50_ms", "rct_p99_ms", "bottleneck_drops", "host_drops",
              "errors", "rpcs", "rpc_failed", "rpc_retransmitted",
              "rpc_p50_ms", "rpc_p99_ms", "rpc_max_ms",
              "pac_tracking_starts", "pac_tx_held"]


def row(tb: Testbed, case: Case, rep: int, r: RunResult) -> dict:
    c = tb.cfg
    d = {"case": case.name, "rep": rep, "rate_mbit": c.rate_mbit,
         "buffer_bytes": c.buffer_bytes, "ports": "pmd" if c.pmd else "main",
         "rto_min_ms": case.rto_min_ms,
         "vm_rto_min_ms": case.vm_rto_min_ms or "",
         "pac_tracking_starts": r.pac.get("pac_tracking_starts", ""),
         "pac_tx_held": r.pac.get("pac_tx_held", "")}
    for k in CSV_FIELDS:
        if k not in d:
            v = getattr(r, k)
            d[k] = "" if v is None else v
    return d


def run(tb: Testbed, selected: list[Case], modes: list[str], repeat: int,
        csv_path: Path) -> list[tuple[Case, RunResult]]:
    """Runs every case 'repeat' times in every mode, printing each RESULT
    line as it comes and writing the CSV after every run (a run cut short
    keeps what it measured)."""
    results: list[tuple[Case, RunResult]] = []
    rows: list[dict] = []
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    turn = 0
    for rep in range(repeat):
        for case in selected:
            tb.set_rto_min(case.rto_min_ms, case.vm_rto_min_ms)
            order = modes if turn % 2 == 0 else modes[::-1]
            turn += 1
            for mode in order:
                t0 = time.monotonic()
                r = tb.run(mode, case.workload)
                results.append((case, r))
                print(result_line(case, r)
                      + f"  # {case.workload.describe()}, "
                      f"{time.monotonic() - t0:.1f} s"
                      + (f", failed_conns={r.errors}" if r.errors else "")
                      + (" setup_failed" if r.setup_failed else ""),
                      flush=True)
                rows.append(row(tb, case, rep, r))
                with open(csv_path, "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=CSV_FIELDS)
                    w.writeheader()
                    w.writerows(rows)
    return results


def summary(results: list[tuple[Case, RunResult]],
            modes: list[str]) -> list[str]:
    """A SUMMARY line per case: each mode's median goodput, its median
    ratio to the first mode's in the same repetition, the worst RPC p99
    and max, the timeouts on both sides summed."""
    lines = []
    names = list(dict.fromkeys(c.name for c, _ in results))
    for name in names:
        runs = [r for c, r in results if c.name == name]
        parts = [f"SUMMARY case={name}"]
        base = [r for r in runs if r.mode == modes[0]]
        for m in modes:
            mine = [r for r in runs if r.mode == m]
            if not mine:
                continue
            g = statistics.median(r.goodput_mbps for r in mine)
            parts.append(f"{m}:goodput_median_mbps={g:.1f}")
            if m != modes[0] and base:
                ratios = [a.goodput_mbps / b.goodput_mbps
                          for a, b in zip(mine, base) if b.goodput_mbps > 0]
                if ratios:
                    parts.append(f"{m}:ratio_median="
                                 f"{statistics.median(ratios):.3f}")
            parts.append(f"{m}:timeout_rounds="
                         f"{sum(r.timeout_rounds for r in mine)}")
            parts.append(f"{m}:sender_rtos="
                         f"{sum(max(0, r.sender_rtos) for r in mine)}")
            parts.append(f"{m}:vm_timeouts="
                         f"{sum(r.vm_timeouts for r in mine)}")
            if any(r.rpcs for r in mine):
                p99 = [r.rpc_p99_ms for r in mine if r.rpc_p99_ms is not None]
                mx = [r.rpc_max_ms for r in mine if r.rpc_max_ms is not None]
                parts.append(f"{m}:rpc_p99_worst_ms="
                             f"{fmt_ms(max(p99) if p99 else None)}")
                parts.append(f"{m}:rpc_max_ms="
                             f"{fmt_ms(max(mx) if mx else None)}")
                parts.append(f"{m}:rpc_failed="
                             f"{sum(r.rpc_failed for r in mine)}")
        lines.append(" ".join(parts))
    return lines
