#!/usr/bin/env python3
"""Checks that a `codeplace sim --json` report adds up:
per iteration hits + misses = accesses, compulsory + capacity + conflict =
misses, capacity >= 0, the ideal bound <= fully associative LRU; over the warm
iterations the functions', libraries' and sets' misses sum to the total."""
import json
import sys


def fail(msg):
    print("check-sim: " + msg)
    sys.exit(1)


r = json.load(open(sys.argv[1]))
its = r["iterations"]
if not its:
    fail("no iterations")
for k, it in enumerate(its):
    if it["hits"] + it["misses"] != it["accesses"]:
        fail("iteration %d: hits + misses != accesses" % k)
    if it["compulsory"] + it["capacity"] + it["conflict"] != it["misses"]:
        fail("iteration %d: 3C parts do not add up" % k)
    if it["capacity"] < 0 or it["ideal"] > it["fully_associative"]:
        fail("iteration %d: capacity < 0 or ideal > fully associative" % k)
    if it["footprint_lines"] > it["accesses"]:
        fail("iteration %d: footprint above accesses" % k)
    if it["misses"] > it["accesses"]:
        fail("iteration %d: more misses than accesses" % k)
warm = its[1:] if len(its) > 1 else its
total = sum(i["misses"] for i in warm)
if r["warm"]["sum"]["misses"] != total:
    fail("warm sum %d != %d" % (r["warm"]["sum"]["misses"], total))
for key in ("functions", "libraries", "sets"):
    s = sum(x["misses"] for x in r[key])
    if s != total:
        fail("%s misses %d != warm misses %d" % (key, s, total))
if len(r["sets"]) != r["cache"]["sets"]:
    fail("sets: %d entries for %d sets" % (len(r["sets"]), r["cache"]["sets"]))
over = sum(1 for s in r["sets"] if s["hot"] > r["cache"]["ways"])
if over != r["overfull_sets"]:
    fail("overfull sets %d != %d" % (over, r["overfull_sets"]))
ms = sorted(i["misses"] for i in warm)
n = len(ms)
med = ms[n // 2] if n % 2 else (ms[n // 2 - 1] + ms[n // 2]) / 2
if abs(med - r["warm"]["misses_median"]) > 1e-9:
    fail("median %s != %s" % (r["warm"]["misses_median"], med))
for it in its:
    want = it["instructions"] * r["cpi"] + it["misses"] * r["cache"]["miss_cycles"]
    if abs(it["cycles"] - want) > 1e-5 * max(1, want):
        fail("cycles %s != %s" % (it["cycles"], want))
print("check-sim: ok (%d iterations, %d warm misses)" % (len(its), total))
