#!/bin/sh
# Annealing moves per CPU second of `plan --strategy colour` (budget 0) on
# the RP2040 demo (16-iteration trace) and, with HEAVY=1, on the heavy
# workload (8 iterations), with PROTO=1 on the protocol workload (8
# iterations; checked on, never tuned on): the CPU seconds of N moves less
# those of one move (the loading, the colouring and the final
# evaluations), divided into N. Each move re-simulates the cache sets it
# changes (cache/'s set index, csim_setidx). BASE=BINARY measures another
# codeplace binary too, each workload with both in turn (the same machine
# and load), and prints the ratio.
#
#   sh bench/anneal.sh          # or: N=50000 HEAVY=1 sh bench/anneal.sh
#                               # or: PROTO=1 sh bench/anneal.sh
#                               # or: BASE=build/cp-old N=100000 sh bench/anneal.sh
set -eu
cd "$(dirname "$0")/.."
CP=${CP:-build/codeplace}
W=build/bench-plan
N=${N:-20000}
mkdir -p "$W"
make --no-print-directory firmware >/dev/null
cpu() { # command...: user+sys seconds
    /usr/bin/time -f "%U %S" "$@" >/dev/null 2>"$W/atime.txt"
    tail -n 1 "$W/atime.txt" | awk '{printf "%.2f", $1 + $2}'
}
rate() { # NAME ELF MAP TRACE
    r0=""
    for bin in ${BASE:-} $CP; do
        P="$bin plan $2 --map $3 --trace $4 --target rp2040 --time 0 --json -q --strategy colour --descent-passes 0"
        t1=$(cpu $P --search-moves 1)
        tn=$(cpu $P --search-moves "$N")
        r=$(python3 -c "print(round(($N - 1) / max($tn - $t1, 1e-3)))")
        note=$(python3 -c "print(' (under a tenth of the setup: noise; raise N)' if $tn - $t1 < 0.1 * $t1 else '')")
        echo "$1 ($bin): $N moves in $(python3 -c "print(round($tn - $t1, 2))") s CPU (setup $t1 s): $r moves per CPU second$note"
        [ -z "$r0" ] || echo "$1: $(python3 -c "print(round($r / $r0, 2))") x $BASE"
        r0=$r
    done
}
ELF=build/fw/demo-rp2040.elf MAP=build/fw/demo-rp2040.map
if [ ! -f "$W/run.trace" ] || [ "$ELF" -nt "$W/run.trace" ]; then
    $CP trace "$ELF" --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 16 -q -o "$W/run.trace" >/dev/null
fi
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
rate "demo" "$ELF" "$MAP" "$W/run.trace"
# trace NAME ELF: build/bench-plan/NAME.trace, 8 iterations, when stale
trace() {
    if [ ! -f "$W/$1.trace" ] || [ "$2" -nt "$W/$1.trace" ]; then
        $CP trace "$2" --target rp2040 --init codeplace_init \
            --iter codeplace_iteration -n 8 -q -o "$W/$1.trace" >/dev/null
    fi
}
if [ "${HEAVY:-0}" = 1 ]; then
    trace heavy build/fw/heavy-rp2040.elf
    rate "heavy" build/fw/heavy-rp2040.elf build/fw/heavy-rp2040.map "$W/heavy.trace"
fi
if [ "${PROTO:-0}" = 1 ]; then
    trace proto build/fw/proto-rp2040.elf
    rate "proto" build/fw/proto-rp2040.elf build/fw/proto-rp2040.map "$W/proto.trace"
fi
