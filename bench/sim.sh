#!/bin/sh
# Cache model speed (figures in docs/BENCHMARKS.md): the 2-way LRU kernel,
# the generic models, whole and partial re-simulation and the ideal bound on
# a synthetic 100-million-instruction stream (build/bench/sim-bench); with
# the demo firmware built, moves on its trace (partial re-simulation and the
# set index) and `codeplace sim` on it. Times are CPU seconds of the process
# (the machine may be shared).
cd "$(dirname "$0")/.." || exit 1
make -s build/bench/sim-bench build/codeplace >/dev/null || exit 1
if ! [ -f build/fw/demo-rp2040.elf ]; then
    ./build/bench/sim-bench "${SIM_BENCH_MINSNS:-100}"
    exit
fi
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
./build/codeplace trace build/fw/demo-rp2040.elf --target rp2040 \
    --init codeplace_init --iter codeplace_iteration -n 20 -o "$t/run.trace" -q >/dev/null || exit 1
./build/bench/sim-bench "${SIM_BENCH_MINSNS:-100}" build/fw/demo-rp2040.elf "$t/run.trace" || exit 1
cpu=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[2:], stdout=open(sys.argv[1], "w"), check=True)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.2f" % (r.ru_utime + r.ru_stime))' "$t/out" ./build/codeplace sim "$t/run.trace" \
    build/fw/demo-rp2040.elf -q) || exit 1
echo "codeplace sim on the demo trace (20 iterations): $cpu s CPU (load, all four models, report)"
grep -E "^  (misses|ideal bound) " "$t/out"
