#!/usr/bin/env python3
"""Prints the examples of every command's help, walking the command tables
as `codeplace help` shows them: the top-level commands, then each group's
subcommands. One line per example, the command's full name, a tab, and
the example with its continuation lines joined:

    help-examples.py CODEPLACE
    trace<TAB>codeplace trace fw.elf --target rp2040 ... -o run.trace

An example is an indented line of the 'example:' paragraph; lines ending
in a backslash continue on the next one.
"""
import re
import subprocess
import sys


def run(cp, *words):
    return subprocess.run([cp, "help", *words], check=True,
                          capture_output=True, text=True).stdout


def names(text, heading):
    out, on = [], False
    for line in text.splitlines():
        if line.strip() == heading:
            on = True
            continue
        if on:
            m = re.match(r"^  ([a-z][a-z0-9-]*)  ", line)
            if not m:
                break
            out.append(m.group(1))
    return out


def examples(text):
    out, on, cur = [], False, ""
    for line in text.splitlines():
        if line.strip() == "example:":
            on = True
            continue
        if not on:
            continue
        if not line.startswith("  "):
            break
        cur += line.strip()
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip() + " "
            continue
        out.append(cur)
        cur = ""
    return out


def main():
    cp = sys.argv[1]
    for c in names(run(cp), "commands:"):
        if c == "help":
            continue
        text = run(cp, c)
        for e in examples(text):
            print("%s\t%s" % (c, e))
        for s in names(text, "subcommands:"):
            for e in examples(run(cp, c, s)):
                print("%s %s\t%s" % (c, s, e))


main()
