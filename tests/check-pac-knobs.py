#!/usr/bin/env python3
# Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
# Version 2.0 (the "License"); see LICENSE.
"""Checks the copies of libpac's knob table that cannot be generated from
it, and ovs-pac-agent's use of the one that is.

libpac's pac_knobs[] and pac_rules[] (lib/pac-knobs.c), as
tools/pac-knobs-dump prints them (JSON), are the source of every knob's
name, unit, default and ranges, and of the rules between values.  Three
texts repeat them and are compared with it here:

  - the PAC table of vswitchd/vswitch.ovsschema, as ovs-patch/0005 adds it:
    every column's type and integer range (the knob's database range);
  - the PAC table of vswitchd/vswitch.xml in the same patch: every column's
    and other_config key's "Default:", and each key's type attribute (an
    "enum" knob's: a string set of its value names);
  - docs/operator.md: the rows of its two knob tables (PAC columns and
    other_config keys), cells name, unit, default and range.

ovs-pac-agent (ovn-config/) validates OVN's keys with that print
(pac-knobs.json) and nothing else.  Checked here:

  - at and beyond every edge of every knob's range (and with the values of
    each type that a parser could wrongly take), the agent accepts and
    refuses what libpac does, as tests/pac-knobs-check reports it
    (pac_knob_parse(), pac_knob_parse_levels(), then pac_config_check(), as
    in ovs-vswitchd), with the same value, and, where a rule between values
    refuses, in the same words; the OVN key is named with them;
  - given a table whose names, ranges, enum values, columns and rule
    messages all differ from libpac's, the agent follows that table: it
    holds no copy of its own;
  - its source names no knob and repeats no rule message.

Prints one line per check and "N passed, N failed"; exits 1 if one failed
(2 if an input cannot be read or parsed).

Usage: tests/check-pac-knobs.py [--dump PROGRAM] [--check PROGRAM]
                                [--agent FILE] [--patch FILE] [--doc FILE]
Defaults: tools/pac-knobs-dump and tests/pac-knobs-check (in the build
directory), $srcdir/ovn-config/ovs-pac-agent,
$srcdir/ovs-patch/0005-vswitchd-pac-config.patch, $srcdir/docs/operator.md.
"""

import argparse
import copy
import importlib.machinery
import importlib.util
import json
import os
import re
import subprocess
import sys
import types


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


# ovs-pac-agent.

class _Stub:
    """Stands for anything of OVS's Python package, which the agent's
    knob code does not use, where python3-openvswitch is missing (the
    agent runs under /usr/bin/python3; "make check" may run another
    Python)."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        return _Stub()

    def __getattr__(self, name):
        return _Stub()


def stub_module(name):
    def getattr_(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Stub()

    parts = name.split(".")
    for i in range(1, len(parts) + 1):
        full = ".".join(parts[:i])
        if full not in sys.modules:
            module = types.ModuleType(full)
            module.__getattr__ = getattr_
            sys.modules[full] = module
        if i > 1:
            setattr(sys.modules[".".join(parts[:i - 1])], parts[i - 1],
                    sys.modules[full])


def load_agent(path):
    """ovs-pac-agent as a module (its main() does not run)."""
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except OSError as e:
        fatal(str(e))
    for name in re.findall(r"^import (ovs\S*)$", source, re.M):
        try:
            importlib.import_module(name)
        except ImportError:
            stub_module(name)
    loader = importlib.machinery.SourceFileLoader("ovs_pac_agent", path)
    spec = importlib.util.spec_from_loader("ovs_pac_agent", loader)
    module = importlib.util.module_from_spec(spec)
    try:
        loader.exec_module(module)
    except Exception as e:
        fatal("%s: %s" % (path, e))
    return module, source


def agent_verdict(knob, text):
    """("ok", value as pac-knobs-check prints it) or ("error", reason)."""
    try:
        value = knob.parse(text)
    except ValueError as e:
        return ("error", str(e))
    if isinstance(value, dict):
        return ("ok", "{%s}" % ", ".join("%d=%d" % (level, value[level])
                                          for level in sorted(value)))
    if isinstance(value, bool):
        return ("ok", "true" if value else "false")
    return ("ok", str(value))


def edge_cases(k):
    """(agent text, pac-knobs-check text or None) for knob row 'k': at and
    beyond each edge of its range, and what a parser could wrongly take.
    None: a text the database cannot hold, which the agent must refuse."""
    cases = []
    if k["type"] == "u32":
        numbers = {k["db_min"], k["db_max"], k["min"], k["max"],
                   k["default"], k["db_min"] - 1, k["db_max"] + 1,
                   k["min"] - 1, k["max"] + 1, 0, 2 ** 32, 2 ** 64}
        texts = [str(n) for n in sorted(numbers) if n >= 0]
        texts += ["", "abc", "-1", "+5", " 5", "5 ", "0x10", "1e3",
                  "0" + str(k["db_min"]), "%d.0" % k["db_min"]]
        cases = [(t, t) for t in texts]
    elif k["type"] == "bool":
        cases = [(t, t) for t in ("true", "false", "yes", "no", "1", "0",
                                  "True", "FALSE", "")]
    elif k["type"] == "enum":
        texts = k["names"] + [n.upper() for n in k["names"]]
        texts += ["", "0", str(len(k["names"])), "x"]
        cases = [(t, t) for t in texts]
    elif k["type"] == "levels":
        lo, hi, n = k["value_min"], k["value_max"], k["db_max"]
        lists = [[k["default"]], [lo], [hi], [lo - 1], [hi + 1],
                 [1000 * (i + 1) for i in range(n)],
                 [1000 * (i + 1) for i in range(n + 1)],
                 [hi - 1, hi], [hi, hi], [lo, lo], [lo, lo + 1],
                 [5000, 4000], [1000, 3000, 2000], [1000, 2000, 2000],
                 [1000 * (n - i) for i in range(n)]]
        for values in lists:
            cases.append((",".join(str(v) for v in values),
                          ",".join("%d=%d" % (i + 1, v)
                                   for i, v in enumerate(values))))
        cases += [(t, None) for t in ("", "a", "1,,2", ",1", "1,", "1, 2",
                                      "-1", "1;2")]
    return cases


def libpac_verdicts(check, lines):
    """pac-knobs-check's answer to each of 'lines' ("NAME\\tVALUE")."""
    try:
        out = subprocess.run([check], input="".join(l + "\n" for l in lines),
                             check=True, stdout=subprocess.PIPE,
                             encoding="utf-8").stdout
    except (OSError, subprocess.CalledProcessError) as e:
        fatal("%s: %s" % (check, e))
    answers = out.splitlines()
    if len(answers) != len(lines):
        fatal("%s: %d answers to %d lines" % (check, len(answers),
                                              len(lines)))
    verdicts = []
    for answer in answers:
        if answer.startswith("ok "):
            verdicts.append(("ok", answer[3:]))
        elif answer.startswith("error: "):
            verdicts.append(("error", answer[7:]))
        else:
            fatal("%s: %r" % (check, answer))
    return verdicts


def rule_patterns(table):
    """A regex for the words of each rule's message (printf format)."""
    return [re.compile(re.escape(r["message"]).replace("%u", r"\d+") + "$")
            for r in table["rules"]]


def check_agent_edges(c, agent, table, check):
    """The agent's verdict on each edge case is libpac's."""
    knobs = {k.name: k for k in agent.make_knobs(table)}
    rules = rule_patterns(table)
    cases, lines = [], []
    for k in table["knobs"]:
        for text, c_text in edge_cases(k):
            if c_text is None:
                verdict = agent_verdict(knobs[k["name"]], text)
                c.check("agent: %s %r refused" % (k["name"], text),
                        verdict[0], "error")
            else:
                cases.append((k, text))
                lines.append("%s\t%s" % (k["name"], c_text))
    for (k, text), theirs in zip(cases, libpac_verdicts(check, lines)):
        ours = agent_verdict(knobs[k["name"]], text)
        what = "agent: %s %r" % (k["name"], text)
        if theirs[0] == "ok" or any(p.match(theirs[1]) for p in rules):
            # The value, or the words of the rule that refuses it.
            c.check(what, ours, theirs)
        else:
            c.check(what + " " + theirs[0], ours[0], theirs[0])


def check_agent_names_key(c, agent, table, check):
    """A value that breaks a rule: the agent ignores that key only, and
    names the OVN key and its level, in the rule's words (as ovs-vswitchd
    names the column); PAC stays on."""
    knobs = agent.make_knobs(table)
    by_name = {k.name: k for k in knobs}
    for r in table["rules"]:
        knob = by_name[r["knob"]]
        # Every kind of rule so far is about a "levels" knob's order.
        text = "5000,4000"
        line = "%s\t1=5000,2=4000" % knob.name
        _, reason = libpac_verdicts(check, [line])[0]
        a = agent.Agent.__new__(agent.Agent)
        a.knobs = {k.key: k for k in knobs}
        setting = a.merge(agent.Setting("lp"),
                          (("port", {"pac": "true", knob.key: text}),))
        c.check("agent: %s %s names the key" % (r["name"], text),
                (setting.enabled, setting.ignored_texts()),
                (True, ["ignored %s (port): %s" % (knob.key, reason)]))


def perturbed(table):
    """'table' with every name, range, enum value, map column and rule
    message changed."""
    t = copy.deepcopy(table)
    for k in t["knobs"]:
        k["name"] = "x" + k["name"]
        if k["where"] != "column":
            k["where"] = "x_" + k["where"]
        if k["type"] == "u32":
            k["db_min"] += 7
            k["db_max"] -= 3
        elif k["type"] == "enum":
            k["names"] = ["x" + n for n in k["names"]]
        elif k["type"] == "levels":
            k["db_max"] -= 2
            k["value_min"] += 10
            k["value_max"] -= 10
    for r in t["rules"]:
        r["knob"] = "x" + r["knob"]
        r["message"] = "not in order: %u=%u, %u=%u"
    return t


def check_agent_follows_table(c, agent, table):
    """Given another table, the agent's keys, ranges, enum values, columns
    and rules are that table's."""
    t = perturbed(table)
    knobs = agent.make_knobs(t)
    c.check("agent(other table): keys", sorted(k.key for k in knobs),
            sorted("pac_" + k["name"].replace("-", "_") for k in t["knobs"]))
    columns = sorted({k["name"] if k["where"] == "column" else k["where"]
                      for k in t["knobs"]})
    c.check("agent(other table): PAC columns followed",
            agent.ovs_tables(knobs)["PAC"], columns + ["external_ids"])

    by_name = {k.name: k for k in knobs}
    values = {}
    for k in t["knobs"]:
        knob = by_name[k["name"]]
        what = "agent(other table): %s" % k["name"]
        if k["type"] == "u32":
            expect = [(k["db_min"] - 1, "error"), (k["db_min"], "ok"),
                      (k["db_max"], "ok"), (k["db_max"] + 1, "error")]
            got = [(n, agent_verdict(knob, str(n))[0]) for n, _ in expect]
            c.check(what + " range", got, expect)
            values[knob.key] = k["db_max"]
        elif k["type"] == "enum":
            old = [n[1:] for n in k["names"]]
            got = [agent_verdict(knob, n)[0] for n in k["names"] + old]
            c.check(what + " names", got,
                    ["ok"] * len(old) + ["error"] * len(old))
            values[knob.key] = k["names"][-1]
        elif k["type"] == "levels":
            lo, hi, n = k["value_min"], k["value_max"], k["db_max"]
            expect = [(str(lo - 1), "error"), (str(lo), "ok"),
                      (str(hi), "ok"), (str(hi + 1), "error"),
                      (",".join(str(lo + i) for i in range(n)), "ok"),
                      (",".join(str(lo + i) for i in range(n + 1)),
                       "error")]
            got = [(x, agent_verdict(knob, x)[0]) for x, _ in expect]
            c.check(what + " ranges", got, expect)
            c.check(what + " rule", agent_verdict(knob, "%d,%d" % (lo + 1,
                                                                   lo)),
                    ("error", "not in order: 1=%d, 2=%d" % (lo + 1, lo)))
            values[knob.key] = {1: lo}
        else:
            values[knob.key] = True

    a = agent.Agent.__new__(agent.Agent)
    a.knobs = {k.key: k for k in knobs}
    setting = agent.Setting("lp")
    setting.values = values
    row = a.desired_row(setting)
    c.check("agent(other table): row columns", sorted(row), columns)
    for k in t["knobs"]:
        knob = by_name[k["name"]]
        if k["where"] == "column":
            got = row[k["name"]]
            expected = values[knob.key] if k["type"] == "levels" \
                else [values[knob.key]]
        else:
            got = row[k["where"]].get(k["name"])
            expected = knob.db_text(values[knob.key])
        c.check("agent(other table): %s in the row" % k["name"], got,
                expected)

    bad = copy.deepcopy(table)
    bad["rules"].append({"name": "r", "kind": "x", "knob": "threshold",
                         "message": "", "doc": ""})
    try:
        agent.make_knobs(bad)
        refused = False
    except ValueError:
        refused = True
    c.check("agent: a table with a rule kind it does not know is refused",
            refused, True)


def check_agent_source(c, source, table):
    """The agent's source names no knob (as a string, or as its OVN key)
    and repeats no rule's message."""
    found = []
    for k in table["knobs"]:
        key = "pac_" + k["name"].replace("-", "_")
        for literal in ('"%s"' % k["name"], "'%s'" % k["name"], key):
            if literal in source:
                found.append(literal)
    for r in table["rules"]:
        words = r["message"].split("%")[0].strip(" (")
        if words in source:
            found.append(words)
    c.check("agent: no knob name or rule message in its source", found, [])


def main():
    srcdir = os.environ.get("srcdir", ".")
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dump", default="tools/pac-knobs-dump")
    p.add_argument("--check", default="tests/pac-knobs-check")
    p.add_argument("--agent", default=os.path.join(
        srcdir, "ovn-config", "ovs-pac-agent"))
    p.add_argument("--patch", default=os.path.join(
        srcdir, "ovs-patch", "0005-vswitchd-pac-config.patch"))
    p.add_argument("--doc", default=os.path.join(srcdir, "docs",
                                                 "operator.md"))
    p.add_argument("--version", default=os.environ.get("PACKAGE_VERSION"),
                   help="the package's version (default: "
                   "$PACKAGE_VERSION)")
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
    agent, source = load_agent(args.agent)

    c = Checker()
    check_schema(c, knobs, schema_pac_table(patch))
    check_xml(c, knobs, xml_pac_table(patch))
    check_doc(c, knobs, doc_tables(doc))
    check_agent_edges(c, agent, table, args.check)
    check_agent_names_key(c, agent, table, args.check)
    check_agent_follows_table(c, agent, table)
    check_agent_source(c, source, table)
    if args.version:
        c.check("agent: VERSION is configure's", agent.VERSION, args.version)
    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
