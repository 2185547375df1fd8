#!/usr/bin/env python3
"""Cross-checks `codeplace image --functions --json` against binutils and the
map file, parsed here independently of codeplace.

usage: check-image.py ELF MAP JSON
- every defined FUNC symbol (readelf -sW) in an executable section is a
  function name or alias, at its address with the Thumb bit cleared;
- sizes agree with `nm -S` (the largest size among names at one address);
- archive and object agree with the map's input-section lines.
Exits 1 with a list of differences."""
import json, re, subprocess, sys

elf, mapf, js = sys.argv[1:4]
funcs = json.load(open(js))
by_name = {}
for f in funcs:
    for n in [f["name"]] + f["aliases"]:
        by_name.setdefault(n, []).append(f)

exec_ranges = []
out = subprocess.run(["arm-none-eabi-readelf", "-SW", elf], capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    m = re.match(r"\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\S+\s+(\S*)", line)
    if m and "X" in m.group(4) and "A" in m.group(4):
        a, s = int(m.group(2), 16), int(m.group(3), 16)
        exec_ranges.append((a, a + s))

nm_size = {}
out = subprocess.run(["arm-none-eabi-nm", "-S", "--defined-only", elf], capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    p = line.split()
    if len(p) == 4:
        a = int(p[0], 16) & ~1
        nm_size[a] = max(nm_size.get(a, 0), int(p[1], 16))

errors = []
seen = 0
out = subprocess.run(["arm-none-eabi-readelf", "-sW", elf], capture_output=True, text=True, check=True).stdout
for line in out.splitlines():
    p = line.split()
    if len(p) < 8 or p[3] != "FUNC" or p[6] == "UND":
        continue
    addr = int(p[1], 16) & ~1
    if not any(lo <= addr < hi for lo, hi in exec_ranges):
        continue
    name = p[7]
    seen += 1
    fs = [f for f in by_name.get(name, []) if f["addr"] == addr]
    if not fs:
        errors.append("%s at 0x%08x: missing" % (name, addr))
        continue
    want = nm_size.get(addr, 0)
    if want and fs[0]["size"] != want:
        errors.append("%s: size %d, nm says %d" % (name, fs[0]["size"], want))

# Input sections from the map: " .text.x 0xA 0xS file" or split over two lines.
isecs = []
pending = None
started = False
for line in open(mapf):
    line = line.rstrip("\n")
    if line.startswith("Linker script and memory map"):
        started = True
        continue
    if not started:
        continue
    m = re.match(r"^ (\.\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
    if m:
        isecs.append((int(m.group(2), 16), int(m.group(3), 16), m.group(1), m.group(4)))
        pending = None
        continue
    m = re.match(r"^ (\.\S+)$", line)
    if m:
        pending = m.group(1)
        continue
    m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
    if m and pending:
        isecs.append((int(m.group(1), 16), int(m.group(2), 16), pending, m.group(3)))
    pending = None

checked = 0
for f in funcs:
    hits = [s for s in isecs if s[1] and s[0] <= f["addr"] < s[0] + s[1]]
    if not hits:
        continue
    a, s, name, path = hits[0]
    m = re.match(r"(.*)\((.*)\)$", path)
    arch, obj = (m.group(1).split("/")[-1], m.group(2).split("/")[-1]) if m else (None, path.split("/")[-1])
    checked += 1
    if f["input_section"] != name or f["archive"] != arch or f["object"] != obj:
        errors.append("%s: %s %s(%s), map says %s %s(%s)" % (f["name"], f["input_section"], f["archive"], f["object"], name, arch, obj))

if seen < 20 or checked < 20:
    errors.append("too few symbols checked: %d symbols, %d attributions" % (seen, checked))
for e in errors:
    print(e)
print("checked %d symbols, %d attributions, %d errors" % (seen, checked, len(errors)))
sys.exit(1 if errors else 0)
