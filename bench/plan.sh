#!/bin/sh
# The planner against its goals on the RP2040 demo firmware (a 16-iteration
# trace): at budget 0 the annealed colouring against the fully associative
# LRU misses of the stock stream; at 16 KiB combined against a density
# ranking by misses per byte (the `density` strategy). The searches count
# moves; TIME (default 60, plan's default --time) is the wall-clock limit of
# each plan: a search that would not make its moves in it cools with the
# clock and stops early, says so ("paced by --time") and may differ from
# run to run; TIME=0 makes every figure but the CPU seconds the same on
# every machine. MOVES sets the moves per search (default: plan's
# default), PAD the hot block's --pad-limit (default: plan's default);
# HEAVY=1 also plans the heavy workload (build/fw/heavy-rp2040.elf, 8
# iterations), PROTO=1 the protocol workload (build/fw/proto-rp2040.elf, 8
# iterations; checked on after a planner change is decided, never tuned
# on). THREADS sets --threads (annealing chains per search, each
# in its own thread; default: plan's default, one chain);
# the searches' lines give their moves and the moves per wall-clock second.
#
#   sh bench/plan.sh            # or: MOVES=50000 TIME=0 HEAVY=1 sh bench/plan.sh
#                               # or: THREADS=1 HEAVY=1 sh bench/plan.sh
#                               # or: PROTO=1 sh bench/plan.sh
set -eu
cd "$(dirname "$0")/.."
CP=${CP:-build/codeplace}
W=${W:-build/bench-plan}
TIME=${TIME:-60}
OPT=""
[ -z "${MOVES:-}" ] || OPT="$OPT --search-moves $MOVES"
[ -z "${PAD:-}" ] || OPT="$OPT --pad-limit $PAD"
[ -z "${THREADS:-}" ] || OPT="$OPT --threads $THREADS"
mkdir -p "$W"
make --no-print-directory firmware >/dev/null
ELF=build/fw/demo-rp2040.elf MAP=build/fw/demo-rp2040.map
if [ ! -f "$W/run.trace" ] || [ "$ELF" -nt "$W/run.trace" ]; then
    $CP trace "$ELF" --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 16 -q -o "$W/run.trace" >/dev/null
fi
$CP sim "$W/run.trace" --elf "$ELF" --map "$MAP" --json -q -o "$W/stock.json"
json() { # FILE EXPR over d
    python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(round(eval(sys.argv[2], {"d": d}), 1))' "$@"
}
cpu() { # OUT command...: runs it, prints user+sys seconds (the wall-clock
    # seconds go to $W/wall.txt)
    out=$1
    shift
    /usr/bin/time -f "%U %S %e" "$@" >"$out" 2>"$W/time.txt"
    tail -n 1 "$W/time.txt" | awk '{print $3}' >"$W/wall.txt"
    tail -n 1 "$W/time.txt" | awk '{printf "%.1f", $1 + $2}'
}
rate() { # FILE: moves, chains and moves per wall-clock second of its plan
    python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))["results"][0]
w=float(open(sys.argv[2]).read())
print("%d moves, %d chain%s, %.0f moves/s over %.1f s wall" % (r["search_moves"],
      len(r["chains"]), "" if len(r["chains"]) == 1 else "s", r["search_moves"] / w, w))' "$1" "$W/wall.txt"
}
M="d['results'][0]['misses_per_iteration']"
tcut() { # FILE: a note when --time stopped a search
    python3 -c 'import json,sys
print(", paced by --time" if json.load(open(sys.argv[1]))["results"][0]["stopped_by_time"] else "")' "$1"
}
fa=$(json "$W/stock.json" "d['warm']['sum']['fully_associative'] / d['warm']['iterations']")
stock=$(json "$W/stock.json" "d['warm']['misses_mean']")
ideal=$(json "$W/stock.json" "d['warm']['sum']['ideal'] / d['warm']['iterations']")
echo "rp2040 demo, 16 iterations: stock $stock warm misses per iteration, fully associative LRU $fa, ideal bound $ideal"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

P="$CP plan $ELF --map $MAP --trace $W/run.trace --target rp2040 --time $TIME --json -q $OPT"
t=$(cpu "$W/hotblock.json" $P --strategy hotblock)
echo "budget 0, hotblock: $(json "$W/hotblock.json" "$M") misses per iteration ($t s CPU)"
t=$(cpu "$W/colour.json" $P --strategy colour)
c=$(json "$W/colour.json" "$M")
echo "budget 0, colour ($(rate "$W/colour.json")): $c misses per iteration, $(python3 -c "print(round($c / $fa, 3))") x fully associative ($t s CPU$(tcut "$W/colour.json"))"
t=$(cpu "$W/density.json" $P --strategy density --budget 16K)
d=$(json "$W/density.json" "$M")
echo "16 KiB, density ranking by misses per byte: $d misses per iteration ($t s CPU)"
t=$(cpu "$W/combined.json" $P --strategy combined --budget 16K)
b=$(json "$W/combined.json" "$M")
echo "16 KiB, combined ($(rate "$W/combined.json") in its three searches): $b misses per iteration, $(python3 -c "print(round($b / $d, 3))") x density ($t s CPU$(tcut "$W/combined.json"))"

# rows NAME P ELF MAP: a second workload on the RP2040 (8 iterations): its
# stock, fully associative and ideal misses, then budget 0 colour and the
# two 16 KiB rows; files $W/NAME.trace and $W/P*.json
rows() {
    name=$1 p=$2 HE=$3 HM=$4
    if [ ! -f "$W/$name.trace" ] || [ "$HE" -nt "$W/$name.trace" ]; then
        $CP trace "$HE" --target rp2040 --init codeplace_init \
            --iter codeplace_iteration -n 8 -q -o "$W/$name.trace" >/dev/null
    fi
    $CP sim "$W/$name.trace" --elf "$HE" --map "$HM" --json -q -o "$W/${p}stock.json"
    fa=$(json "$W/${p}stock.json" "d['warm']['sum']['fully_associative'] / d['warm']['iterations']")
    echo "$name workload, 8 iterations: stock $(json "$W/${p}stock.json" "d['warm']['misses_mean']"), fully associative LRU $fa, ideal bound $(json "$W/${p}stock.json" "d['warm']['sum']['ideal'] / d['warm']['iterations']")"
    P="$CP plan $HE --map $HM --trace $W/$name.trace --target rp2040 --time $TIME --json -q $OPT"
    t=$(cpu "$W/${p}colour.json" $P --strategy colour)
    c=$(json "$W/${p}colour.json" "$M")
    echo "$name, budget 0, colour ($(rate "$W/${p}colour.json")): $c misses per iteration, $(python3 -c "print(round($c / $fa, 3))") x fully associative ($t s CPU$(tcut "$W/${p}colour.json"))"
    t=$(cpu "$W/${p}density.json" $P --strategy density --budget 16K)
    d=$(json "$W/${p}density.json" "$M")
    echo "$name, 16 KiB, density: $d misses per iteration ($t s CPU)"
    t=$(cpu "$W/${p}combined.json" $P --strategy combined --budget 16K)
    b=$(json "$W/${p}combined.json" "$M")
    echo "$name, 16 KiB, combined ($(rate "$W/${p}combined.json")): $b misses per iteration, $(python3 -c "print(round($b / $d, 3))") x density ($t s CPU$(tcut "$W/${p}combined.json"))"
}
if [ "${HEAVY:-0}" = 1 ]; then
    rows heavy h build/fw/heavy-rp2040.elf build/fw/heavy-rp2040.map
fi
if [ "${PROTO:-0}" = 1 ]; then
    rows proto p build/fw/proto-rp2040.elf build/fw/proto-rp2040.map
fi
