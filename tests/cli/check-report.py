#!/usr/bin/env python3
"""Schema and consistency checks for `codeplace report` outputs.

    check-report.py csv-func FILE TOTAL
    check-report.py csv-group FILE TOTAL
    check-report.py json FILE TOTAL [IMAGE_FUNCTIONS_JSON SAMPLES_TXT]
    check-report.py folded FILE TOTAL
    check-report.py speedscope FILE TOTAL
    check-report.py svg FILE NLIBBARS NFUNCBARS
Exits 1 with a message when a check fails.
"""
import csv
import json
import re
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print("check-report: " + msg)
    sys.exit(1)


def near(a, b, eps=1e-5):
    return abs(a - b) <= eps


def csv_func(path, total):
    rows = list(csv.DictReader(open(path)))
    want = ["function", "addr", "size", "samples", "share", "samples_per_byte",
            "library", "section", "object"]
    with open(path) as f:
        head = f.readline().strip().split(",")
    if head[:len(want)] != want:
        fail("header %s" % head)
    s = 0
    for r in rows:
        n = int(r["samples"])
        s += n
        if not near(float(r["share"]), n / total):
            fail("share of %s" % r["function"])
        if r["addr"]:
            if not re.fullmatch(r"0x[0-9a-f]{8}", r["addr"]):
                fail("addr %r" % r["addr"])
            size = int(r["size"])
            if size and not near(float(r["samples_per_byte"]), n / size, 1e-5):
                fail("density of %s" % r["function"])
        elif not r["function"].startswith("("):
            fail("row without address: %s" % r["function"])
    if s != total:
        fail("rows add up to %d, not %d" % (s, total))


def csv_group(path, total):
    rows = list(csv.reader(open(path)))
    if rows[0][1:] != ["samples", "share", "functions", "bytes"]:
        fail("header %s" % rows[0])
    if sum(int(r[1]) for r in rows[1:]) != total:
        fail("groups do not add up")
    counts = [int(r[1]) for r in rows[1:]]
    if counts != sorted(counts, reverse=True):
        fail("not sorted by samples")


def check_json(path, total, img=None, samples=None):
    d = json.load(open(path))
    for k, t in [("samples_file", str), ("image", str), ("total", int),
                 ("outside", int), ("halted", int), ("functions", list),
                 ("libraries", list), ("sections", list)]:
        if not isinstance(d.get(k), t):
            fail("key %s" % k)
    if d["total"] != total:
        fail("total %d" % d["total"])
    for key in ("functions", "libraries", "sections"):
        if sum(r["samples"] for r in d[key]) != total:
            fail("%s do not add up" % key)
    if sum(r["samples"] for r in d["functions"] if not r["function"]) != d["outside"]:
        fail("outside rows do not add up")
    for r in d["functions"]:
        for k in ("name", "size", "samples", "share", "library", "section"):
            if k not in r:
                fail("function row without %s" % k)
    if img:
        funcs = json.load(open(img))
        byname = {f["name"]: f for f in funcs}
        want = {}
        for line in open(samples):
            if line.startswith("#") or not line.strip():
                continue
            a, c = line.split()
            a = int(a, 16)
            hit = [f for f in funcs if f["addr"] <= a < f["addr"] + f["size"]]
            name = hit[0]["name"] if hit else None
            if name:
                want[name] = want.get(name, 0) + int(c)
        got = {r["name"]: r["samples"] for r in d["functions"] if r["function"]}
        if got != want:
            fail("attribution %s != %s" % (got, want))
        for r in d["functions"]:
            if r["function"]:
                f = byname[r["name"]]
                if f["addr"] != r["addr"] or f["size"] != r["size"]:
                    fail("%s: address/size differ from the image" % r["name"])
                lib = f["archive"] or "(objects)"
                if r["library"] != lib:
                    fail("%s: library %s, image says %s" % (r["name"], r["library"], lib))


def folded(path, total):
    s = 0
    for line in open(path):
        m = re.fullmatch(r"([^;\n]+;)?([^;\n]+) (\d+)\n", line)
        if not m:
            fail("folded line %r" % line)
        s += int(m.group(3))
    if s != total:
        fail("folded adds up to %d" % s)


def speedscope(path, total):
    d = json.load(open(path))
    if d["$schema"] != "https://www.speedscope.app/file-format-schema.json":
        fail("schema")
    frames = d["shared"]["frames"]
    p = d["profiles"][0]
    if p["type"] != "sampled" or len(p["samples"]) != len(p["weights"]):
        fail("profile shape")
    for st in p["samples"]:
        if not st or any(not (0 <= i < len(frames)) for i in st):
            fail("frame index")
    if sum(p["weights"]) != total or p["endValue"] != total:
        fail("weights add up to %d" % sum(p["weights"]))


def svg(path, nlib, nfunc):
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(path).getroot()
    if root.tag != ns + "svg":
        fail("root %s" % root.tag)

    def bars(cls):
        for g in root.iter(ns + "g"):
            if cls in (g.get("class") or "").split():
                return [r for r in g.iter(ns + "rect") if r.get("class") == "bar"]
        fail("no chart %s" % cls)
    if len(bars("libs")) != nlib or len(bars("top-functions")) != nfunc:
        fail("bars: %d libraries, %d functions" % (len(bars("libs")), len(bars("top-functions"))))
    for r in root.iter(ns + "rect"):
        if float(r.get("width", "0")) < 0 or float(r.get("height", "0")) < 0:
            fail("negative size")


def main():
    kind, path = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    if kind == "csv-func":
        csv_func(path, int(rest[0]))
    elif kind == "csv-group":
        csv_group(path, int(rest[0]))
    elif kind == "json":
        check_json(path, int(rest[0]), *rest[1:])
    elif kind == "folded":
        folded(path, int(rest[0]))
    elif kind == "speedscope":
        speedscope(path, int(rest[0]))
    elif kind == "svg":
        svg(path, int(rest[0]), int(rest[1]))
    else:
        fail("unknown check " + kind)


main()
