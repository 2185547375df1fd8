#!/bin/sh
# Planner speed: one colour plan (100,000 local-search moves, each an exact
# re-simulation of the sets it changes) and one combined plan at 16 KiB on a
# 16-iteration trace of the RP2040 demo firmware. Prints CPU seconds.
set -eu
cd "$(dirname "$0")/.."
CP=build/codeplace
W=build/bench-plan
mkdir -p "$W"
make --no-print-directory firmware >/dev/null
ELF=build/fw/demo-rp2040.elf MAP=build/fw/demo-rp2040.map
[ -f "$W/run.trace" ] || $CP trace "$ELF" --target rp2040 --init codeplace_init \
    --iter codeplace_iteration -n 16 -q -o "$W/run.trace" >/dev/null
cpu() { # command...: prints user+sys seconds
    /usr/bin/time -f "%U %S" "$@" 2>"$W/time.txt" >/dev/null
    tail -1 "$W/time.txt" | awk '{printf "%.2f", $1 + $2}'
}
t=$(cpu $CP plan "$ELF" --map "$MAP" --trace "$W/run.trace" --target rp2040 \
    --strategy colour --search-moves 100000 -q)
echo "plan colour, 100,000 moves: $t s CPU ($(awk -v t="$t" 'BEGIN{printf "%.0f", 100000 / t}') moves/s including loading and the graph)"
t=$(cpu $CP plan "$ELF" --map "$MAP" --trace "$W/run.trace" --target rp2040 \
    --strategy combined --budget 16K -q)
echo "plan combined, 16 KiB: $t s CPU"
