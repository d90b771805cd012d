#!/usr/bin/env python3
# Copyright (c) 2026 ovs-pac authors.  Licensed under the Apache License,
# Version 2.0 (the "License"); see LICENSE.
"""Checks ovs-pac's man pages: ovs-pac-agent(8) (ovn-config/) and
ovs-vswitchd-pac(8) (vswitchd-ext/).

  - each renders with "man -l" without a warning of groff's;
  - its .TH names the package's version ($PACKAGE_VERSION, from
    configure, when set);
  - ovs-pac-agent(8) documents every option the agent defines
    (add_argument) and every command it registers (command_register);
  - ovs-vswitchd-pac(8) documents every pac/* command vswitchd-ext/
    registers (unixctl_command_register).

Prints one line per check and "N passed, N failed"; exits 1 if one
failed, 77 (skipped) if man(1) is not installed.

Usage: tests/check-man-pages.py   (from the top of the tree, or with
$srcdir set to it)
"""

import glob
import os
import re
import shutil
import subprocess
import sys


class Checker:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, what, ok, detail=""):
        if ok:
            self.passed += 1
            print("ok: %s" % what)
        else:
            self.failed += 1
            print("FAIL: %s%s" % (what, ": " + detail if detail else ""))


def render(page):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
    proc = subprocess.run(["man", "--warnings", "-l", page], env=env,
                          capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


def roff_names(text):
    """'text' as a roff source writes it: "-" as "\\-"."""
    return text.replace("-", "\\-")


def main():
    srcdir = os.environ.get("srcdir", ".")
    if not shutil.which("man"):
        print("man not installed: skipped")
        return 77
    c = Checker()
    agent_page = os.path.join(srcdir, "ovn-config", "ovs-pac-agent.8")
    switch_page = os.path.join(srcdir, "vswitchd-ext", "ovs-vswitchd-pac.8")
    version = os.environ.get("PACKAGE_VERSION")
    for page in (agent_page, switch_page):
        name = os.path.basename(page)
        rc, out, err = render(page)
        c.check("%s renders" % name, rc == 0 and "NAME" in out, err)
        c.check("%s: no groff warning" % name, not err.strip(), err.strip())
        with open(page, encoding="utf-8") as f:
            source = f.read()
        th = re.search(r'^\.TH \S+ \d+ "([^"]*)"', source, re.M)
        if version:
            c.check("%s: .TH version is %s" % (name, version),
                    th is not None and th.group(1) == version,
                    th.group(1) if th else "no .TH")

    with open(agent_page, encoding="utf-8") as f:
        page = f.read()
    with open(os.path.join(srcdir, "ovn-config", "ovs-pac-agent"),
              encoding="utf-8") as f:
        agent = f.read()
    options = re.findall(r'add_argument\(\s*"(--[a-z-]+)"', agent)
    # ovs.daemon's and ovs.vlog's options, which the agent takes too.
    options += ["--detach", "--no-chdir", "--monitor", "--pidfile",
                "--overwrite-pidfile", "--verbose", "--log-file"]
    for option in options:
        c.check("ovs-pac-agent.8 documents %s" % option,
                roff_names(option) in page)
    for command in re.findall(r'command_register\(\s*"([^"]+)"', agent):
        c.check("ovs-pac-agent.8 documents %s" % command,
                roff_names(command) in page)

    with open(switch_page, encoding="utf-8") as f:
        page = f.read()
    commands = []
    for path in sorted(glob.glob(os.path.join(srcdir, "vswitchd-ext",
                                              "*.c"))):
        with open(path, encoding="utf-8") as f:
            commands += re.findall(r'unixctl_command_register\(\s*"([^"]+)"',
                                   f.read())
    c.check("vswitchd-ext registers pac/ commands",
            any(x.startswith("pac/") for x in commands), str(commands))
    for command in commands:
        c.check("ovs-vswitchd-pac.8 documents %s" % command,
                roff_names(command) in page)

    print("%d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
