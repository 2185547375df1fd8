#!/bin/sh
# Recording speed of the virtual board (codeplace trace) on the demo
# firmware, in million instructions per second of CPU time (user + system,
# best of 3: the figure does not depend on what else the machine runs), and
# the trace size in bytes per instruction. The per-instruction hook count
# (--count-each, no trace) is the reference: unicorn calling a hook on every
# instruction.
#   sh bench/trace.sh            (after `make build/codeplace firmware`)
cd "$(dirname "$0")/.." || exit 2
[ -f build/fw/demo-rp2040.elf ] || make --no-print-directory firmware >/dev/null || exit 1
[ -x build/codeplace ] || make --no-print-directory build/codeplace >/dev/null || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" <<'PY'
import os, resource, subprocess, sys, json
tmp = sys.argv[1]
H = ["--init", "codeplace_init", "--iter", "codeplace_iteration"]
runs = [("rp2040", "build/fw/demo-rp2040.elf", 100),
        ("imxrt1062", "build/fw/demo-imxrt1062.elf", 300)]

def cpu(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out

for target, elf, n in runs:
    tr = os.path.join(tmp, target + ".trace")
    rec = [100.0, None]
    ref = [100.0, None]
    for _ in range(3):
        t, out = cpu(["build/codeplace", "trace", "-q", elf, "--target", target] + H +
                     ["-n", str(n), "-o", tr, "--json"])
        if t < rec[0]:
            rec = [t, json.loads(out)]
        t, out = cpu(["build/codeplace", "trace", "-q", elf, "--target", target] + H +
                     ["-n", str(n), "--count-each", "--json"])
        if t < ref[0]:
            ref = [t, json.loads(out)]
    j = rec[1]
    insns = j["instructions"]
    print("trace %-9s %d iterations, %d instructions: %.1f M instructions/s recording "
          "(%.2f s CPU), %.1f M/s per-instruction hook count; %.3f bytes per instruction"
          % (target, n, insns, insns / rec[0] / 1e6, rec[0],
             ref[1]["instructions"] / ref[0] / 1e6, j["bytes"] / insns))
PY
