#!/usr/bin/env python3
# Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
# Version 2.0 (the "License"); see LICENSE.
"""Checks the copies of libpac's knob table that cannot be generated from it.

libpac's pac_knobs[] and pac_rules[] (lib/pac-knobs.c), as
lib/pac-knobs-dump prints them (JSON), are the source of every knob's
name, unit, default and ranges, and of the rules between values.  Three
texts repeat them and are compared with it here:

  - the PAC table of vswitchd/vswitch.ovsschema, as ovs-patch/0005 adds it:
    every column's type and integer range (the knob's database range);
  - the PAC table of vswitchd/vswitch.xml in the same patch: every column's
    and other_config key's "Default:", and each key's type attribute (an
    "enum" knob's: a string set of its value names);
  - docs/operator.md: the rows of its two knob tables (PAC columns and
    other_config keys), cells name, unit, default and range.

Prints one line per check and "N passed, N failed"; exits 1 if one failed
(2 if an input cannot be read or parsed).

Usage: tests/check-pac-knobs.py [--dump PROGRAM] [--patch FILE] [--doc FILE]
Defaults: lib/pac-knobs-dump (in the build directory),
$srcdir/ovs-patch/0005-vswitchd-pac-config.patch, $srcdir/docs/operator.md.
"""

import argparse
import json
import os
import re
import subprocess
import sys


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, what, got, expected):
        if got == expected:
            self.passed += 1
            print("ok: %s" % what)
        else:
            self.failed += 1
            print("FAIL: %s: %r, libpac's table says %r"
                  % (what, got, expected))


def fatal(msg):
    print("check-pac-knobs: %s" % msg, file=sys.stderr)
    sys.exit(2)


def read_table(dump):
    """libpac's knob table and rules, as 'dump' prints them."""
    try:
        out = subprocess.run([dump], check=True, stdout=subprocess.PIPE,
                             encoding="utf-8").stdout
        table = json.loads(out)
    except (OSError, subprocess.CalledProcessError, ValueError) as e:
        fatal("%s: %s" % (dump, e))
    if not table.get("knobs"):
        fatal("%s printed no knob" % dump)
    for row in table["knobs"]:
        row.setdefault("names", [])
    return table


def patch_new_side(patch, path):
    """Returns the lines that 'patch' adds or keeps in 'path' (the new
    side of its hunks), without the diff markers."""
    out = []
    in_file = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_file = line.endswith(" b/" + path)
            continue
        if not in_file or line.startswith(("+++", "---", "@@", "\\")):
            continue
        if line.startswith(("+", " ")):
            out.append(line[1:])
        elif line == "":
            out.append("")
    if not out:
        fatal("the patch does not change %s" % path)
    return "\n".join(out)


def schema_pac_table(patch):
    text = patch_new_side(patch, "vswitchd/vswitch.ovsschema")
    m = re.search(r'"PAC":\s*{', text)
    if not m:
        fatal("no PAC table in the patch's vswitch.ovsschema")
    try:
        table, _ = json.JSONDecoder().raw_decode(text, m.end() - 1)
    except ValueError as e:
        fatal("the PAC table of vswitch.ovsschema: %s" % e)
    return table["columns"]


def xml_pac_table(patch):
    """Returns {(column, key or None): (type attribute or None, text)}."""
    text = patch_new_side(patch, "vswitchd/vswitch.xml")
    m = re.search(r'<table name="PAC".*?</table>', text, re.S)
    if not m:
        fatal("no PAC table in the patch's vswitch.xml")
    columns = {}
    for c in re.finditer(r'<column\s+name="([^"]+)"(?:\s+key="([^"]+)")?'
                         r"(?:\s+type='([^']*)')?\s*(?:/>|>(.*?)</column>)",
                         m.group(0), re.S):
        name, key, type_, body = c.groups()
        columns[(name, key)] = (type_, " ".join((body or "").split()))
    return columns


def default_text(knob):
    if knob["type"] == "bool":
        return "true" if knob["default"] else "false"
    if knob["type"] == "enum":
        return knob["names"][knob["default"]]
    return str(knob["default"])


def check_schema(c, knobs, columns):
    ours = {k["name"]: k for k in knobs if k["where"] == "column"}
    theirs = set(columns) - {"other_config", "external_ids"}
    c.check("schema: PAC columns", sorted(theirs), sorted(ours))
    for name, k in ours.items():
        if name not in columns:
            continue
        t = columns[name]["type"]
        what = "schema: PAC column %s" % name
        if k["type"] == "u32":
            c.check(what + " type", t, {
                "key": {"type": "integer",
                        "minInteger": k["db_min"],
                        "maxInteger": k["db_max"]},
                "min": 0, "max": 1})
        elif k["type"] == "bool":
            c.check(what + " type", t,
                    {"key": {"type": "boolean"}, "min": 0, "max": 1})
        else:
            c.check(what + " type", t, {
                "key": {"type": "integer",
                        "minInteger": k["db_min"],
                        "maxInteger": k["db_max"]},
                "value": {"type": "integer",
                          "minInteger": k["value_min"],
                          "maxInteger": k["value_max"]},
                "min": 0, "max": k["db_max"]})


def check_xml(c, knobs, columns):
    keys = {key for (name, key) in columns
            if name == "other_config" and key}
    c.check("vswitch.xml: other_config keys", sorted(keys),
            sorted(k["name"] for k in knobs if k["where"] == "other_config"))
    for k in knobs:
        if k["where"] == "column":
            entry = columns.get((k["name"], None))
            what = "vswitch.xml: PAC column %s" % k["name"]
        else:
            entry = columns.get(("other_config", k["name"]))
            what = "vswitch.xml: PAC other_config:%s" % k["name"]
            if entry:
                if k["type"] == "bool":
                    expected = {"type": "boolean"}
                elif k["type"] == "enum":
                    expected = {"type": "string",
                                "enum": ["set", k["names"]]}
                else:
                    expected = {"type": "integer", "minInteger": k["db_min"],
                                "maxInteger": k["db_max"]}
                try:
                    got = json.loads(entry[0]) if entry[0] else None
                except ValueError:
                    got = entry[0]
                c.check(what + " type", got, expected)
        if not entry:
            continue
        if k["type"] == "levels":
            m = re.search(r"Default[^:]*:[^.]*?\b1=(\d+)", entry[1])
            got = m and "{1=%s}" % m.group(1)
            expected = "{1=%d}" % k["default"]
        else:
            m = re.search(r"Default:\s*(\w+)", entry[1])
            got = m and m.group(1)
            expected = default_text(k)
        c.check(what + " default", got, expected)


def doc_tables(doc):
    """Returns the rows of operator.md's knob tables, whose first header
    cells are "column" and "key" followed by unit, default and range:
    {"column": [[name, unit, default, range], ...], "key": [...]}."""
    tables = {}
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        cells = [x.strip() for x in line.strip().strip("|").split("|")]
        if (line.startswith("|") and len(cells) >= 4
                and cells[0] in ("column", "key")
                and cells[1:4] == ["unit", "default", "range"]):
            rows = []
            for row in lines[i + 2:]:
                if not row.startswith("|"):
                    break
                rows.append([x.strip() for x in
                             row.strip().strip("|").split("|")][:4])
            tables[cells[0]] = rows
    for which in ("column", "key"):
        if which not in tables:
            fatal("operator.md has no \"| %s | unit | default | range |\" "
                  "table" % which)
    return tables


def plain(cell):
    return cell.replace("`", "").strip()


def check_doc(c, knobs, tables):
    for which, where in (("column", "column"), ("key", "other_config")):
        ours = [k for k in knobs if k["where"] == where]
        rows = tables[which]
        c.check("operator.md: %s table rows" % where,
                [plain(r[0]) for r in rows], [k["name"] for k in ours])
        by_name = {plain(r[0]): r for r in rows}
        for k in ours:
            row = by_name.get(k["name"])
            if not row:
                continue
            what = "operator.md: %s" % k["name"]
            if k["type"] == "levels":
                default = "{1=%d} (2 levels)" % k["default"]
                range_ = ("levels %d … %d, bytes %d … %d"
                          % (k["db_min"], k["db_max"], k["value_min"],
                             k["value_max"]))
            elif k["type"] == "bool":
                default = default_text(k)
                range_ = ""
            elif k["type"] == "enum":
                default = default_text(k)
                range_ = ", ".join(k["names"])
            else:
                default = default_text(k)
                range_ = "%d … %d" % (k["db_min"], k["db_max"])
            c.check(what + " unit", plain(row[1]), k["unit"])
            c.check(what + " default", plain(row[2]), default)
            c.check(what + " range", plain(row[3]), range_)


def main():
    srcdir = os.environ.get("srcdir", ".")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dump", default="lib/pac-knobs-dump")
    p.add_argument("--patch", default=os.path.join(
        srcdir, "ovs-patch", "0005-vswitchd-pac-config.patch"))
    p.add_argument("--doc", default=os.path.join(srcdir, "docs",
                                                 "operator.md"))
    args = p.parse_args()

    table = read_table(args.dump)
    knobs = table["knobs"]
    try:
        with open(args.patch, encoding="utf-8") as f:
            patch = f.read()
        with open(args.doc, encoding="utf-8") as f:
            doc = f.read()
    except OSError as e:
        fatal(str(e))

    c = Checker()
    check_schema(c, knobs, schema_pac_table(patch))
    check_xml(c, knobs, xml_pac_table(patch))
    check_doc(c, knobs, doc_tables(doc))
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
