#!/bin/sh
# Cache model speed: the 2-way LRU kernel, the generic models, whole and
# partial re-simulation and the ideal bound on a synthetic 100-million-
# instruction stream (build/bench/sim-bench), then the full report on the
# demo firmware's trace when the firmware is built. Times are CPU seconds of
# the process (the machine may be shared).
cd "$(dirname "$0")/.." || exit 1
make -s build/bench/sim-bench build/codeplace >/dev/null || exit 1
./build/bench/sim-bench "${SIM_BENCH_MINSNS:-100}" || exit 1
if [ -f build/fw/demo-rp2040.elf ]; then
    t=$(mktemp -d)
    trap 'rm -rf "$t"' EXIT
    ./build/codeplace trace build/fw/demo-rp2040.elf --target rp2040 \
        --init codeplace_init --iter codeplace_iteration -n 20 -o "$t/run.trace" -q >/dev/null || exit 1
    runs=$(./build/codeplace trace --info "$t/run.trace" --json |
        python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["fetch_runs"], j["instructions"])')
    set -- $runs
    cpu=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f" % (r.ru_utime + r.ru_stime))' "$t/out" ./build/codeplace sim "$t/run.trace" \
        --elf build/fw/demo-rp2040.elf -q) || exit 1
    echo "demo (rp2040, 20 iterations, $1 fetch runs, $2 instructions):" \
        "codeplace sim $cpu s CPU (load, all four models, report)"
    grep -E "^  (misses|ideal bound) " "$t/out"
fi
