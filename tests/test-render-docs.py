#!/usr/bin/env python3
"""tools/render-docs: the committed pages match what docs/data/ renders,
and the check catches each way a page can fall out of step with its data
(a figure typed over, a CSV measured again, a table typed outside
markers, a marker naming no table).  Each case works on a copy of the
docs in a temporary tree (render-docs --top).  Prints "N passed, N
failed"; exits 1 on a failure."""

from __future__ import annotations

import csv
import importlib.machinery
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent
RENDER = SRC / "tools" / "render-docs"


def load_render():
    loader = importlib.machinery.SourceFileLoader("render_docs", str(RENDER))
    spec = importlib.util.spec_from_loader("render_docs", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["render_docs"] = module     # dataclasses look it up there
    loader.exec_module(module)
    return module


def run(top: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RENDER), "--top", str(top),
                           *args], capture_output=True, text=True)


def copy_tree(tmp: Path) -> Path:
    top = tmp / "tree"
    shutil.copytree(SRC / "docs", top / "docs")
    shutil.copy(SRC / "README.md", top / "README.md")
    return top


def first_marked_table(top: Path) -> tuple[Path, str, int]:
    """A page, the name of its first rendered table and the line of that
    table's first data row."""
    for page in [top / "README.md"] + sorted((top / "docs").glob("*.md")):
        lines = page.read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("<!-- table "):
                return page, line.split()[2], i + 3
    raise AssertionError("no page has a rendered table")


def test_committed_pages_match_their_data(tmp: Path) -> None:
    r = run(SRC, "--check")
    assert r.returncode == 0, r.stderr


def test_figure_typed_over_is_found_and_rendered_back(tmp: Path) -> None:
    top = copy_tree(tmp)
    page, name, row = first_marked_table(top)
    lines = page.read_text().split("\n")
    original = lines[row]
    lines[row] = original.replace("|", "| 999999 |", 1)
    page.write_text("\n".join(lines))
    r = run(top, "--check")
    assert r.returncode == 1 and page.name in r.stderr, r.stderr
    r = run(top)
    assert r.returncode == 0, r.stderr
    assert page.read_text().split("\n")[row] == original


def test_csv_measured_again_changes_the_page(tmp: Path) -> None:
    top = copy_tree(tmp)
    page, name, row = first_marked_table(top)
    before = page.read_text()
    render = load_render()
    render.set_top(top)
    tables, _ = render.load_definitions()
    table = tables[name]
    # A column the table shows as a number, that no filter or row key
    # reads: set to a figure no page has, in every row of every file.
    keys = {table.rows} if isinstance(table.rows, str) else set(
        table.rows if not callable(table.rows) else ())
    filters = set(table.where or {})
    for c in table.cols:
        filters |= set(c.where or {})
    shown = next(c.value for c in table.cols
                 if isinstance(c.value, str) and c.fmt is not render.RAW
                 and c.value not in keys | filters)
    for f in table.files():
        csv_path = top / "docs" / "data" / f
        with open(csv_path, newline="") as fh:
            data = list(csv.DictReader(fh))
        for row in data:
            row[shown] = "987654"
        with open(csv_path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(data[0]))
            w.writeheader()
            w.writerows(data)
    r = run(top, "--check")
    assert r.returncode == 1 and "run tools/render-docs" in r.stderr, \
        r.stderr
    assert run(top).returncode == 0
    after = page.read_text()
    assert after != before and "987 654" in after


def test_table_of_figures_outside_markers_is_refused(tmp: Path) -> None:
    top = copy_tree(tmp)
    page = top / "docs" / "benchmarks.md"
    page.write_text(page.read_text() + "\n| senders | goodput |\n|---:|---:|"
                    "\n| 64 | 512.3 Mbit/s |\n")
    r = run(top, "--check")
    assert r.returncode == 1 and "outside" in r.stderr, r.stderr


def test_table_of_names_outside_markers_is_fine(tmp: Path) -> None:
    top = copy_tree(tmp)
    page = top / "docs" / "benchmarks.md"
    page.write_text(page.read_text() + "\n| file | what |\n|---|---|"
                    "\n| `lib/pac.c` | the entry points |\n")
    r = run(top, "--check")
    assert r.returncode == 0, r.stderr


def test_marker_naming_no_table_is_refused(tmp: Path) -> None:
    top = copy_tree(tmp)
    page = top / "docs" / "benchmarks.md"
    page.write_text(page.read_text() + "\n<!-- table no-such-table -->\n"
                    "<!-- end table -->\n")
    r = run(top, "--check")
    assert r.returncode == 1 and "no-such-table" in r.stderr, r.stderr


def test_cells_aggregate_as_documented(tmp: Path) -> None:
    render = load_render()
    rows = [{"mode": "pac", "x": "10.4"}, {"mode": "pac", "x": "1234.6"},
            {"mode": "off", "x": "3"}]
    Col = render.Col
    assert Col("h", "x", {"mode": "pac"}, agg="range",
               fmt=render.INT).cell(rows) == "10-1 235"
    assert Col("h", "x", {"mode": "pac"}, agg="sum",
               fmt=render.F1).cell(rows) == "1 245.0"
    assert Col("h", "x", {"mode": "off"}, fmt=render.INT).cell(rows) == "3"
    # Halves round as a reader rounds them, not to even.
    assert [render.INT(352.5), render.F1(0.25), render.INT(-2.5)] == \
        ["353", "0.3", "-3"]
    assert Col("h", agg="count", where={"mode": "pac"}).cell(rows) == "2"
    assert Col("h", "x", {"mode": "ap"}, agg="max").cell(rows) == "-"
    for bad in (Col("h", "x", {"mode": "pac"}),      # two rows for "one"
                Col("h", "x", {"mode": "ap"})):      # none for "one"
        try:
            bad.cell(rows)
        except ValueError:
            continue
        raise AssertionError(f"{bad} gave a cell")


def main() -> int:
    tests = [v for k, v in sorted(globals().items())
             if k.startswith("test_") and callable(v)]
    passed = failed = 0
    for test in tests:
        with tempfile.TemporaryDirectory() as tmp:
            try:
                test(Path(tmp))
            except Exception:
                failed += 1
                print(f"FAIL {test.__name__}")
                traceback.print_exc()
            else:
                passed += 1
                print(f"ok   {test.__name__}")
    print(f"render-docs: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
