# The plan-relink-retrace loop on a Zephyr build with the codeplace module
# (docs/zephyr.md "The whole loop"): source after lib.sh and vendor-lib.sh.
# Set after sourcing where the default does not fit:
#   ZL_W      the work directory (made here; default $TEST_TMP/w): the build
#             in $ZL_W/b (CONFIG_CODEPLACE_LIST pointing at
#             $ZL_W/codeplace.list), everything else beside it
#   ZL_CACHE  the --target and --cache arguments of sim and plan (default:
#             the RP2040's cache over the mps2-an385 twin)
#   ZL_N      the iterations each recording makes (default 200)
# zl_record NAME ELF TRACE records ELF into TRACE with `trace --qemu` (its
# output goes to $ZL_W/NAME.rec): here echo_server's, 200 echoes of the
# tool's own traffic after 20; a test of another service defines its own
# after sourcing this file.
#
#   zl_rec NAME        records a copy of the build's zephyr.elf (the build
#                      directory is relinked afterwards) into $ZL_W/NAME.trace
#                      and prints its mean warm misses per iteration;
#                      $ZL_W/NAME.sim.json keeps sim's per-iteration figures
#   zl_plan BUDGET [ARGS]
#                      plans for Zephyr from $ZL_W/base (the base recording)
#                      into $ZL_W/pBUDGET.list and .layout (in the build
#                      directory: the map names objects relative to it) and
#                      prints the predicted warm misses per iteration (the
#                      list's figure, from the JSON's "for_zephyr"); ARGS go
#                      to plan, $ZL_SUFFIX (if set) after BUDGET in the names
#   zl_relink LIST     relinks the build with LIST as the module's list
#   zl_relink_sram LIST
#                      relinks with LIST and checks that the module placed
#                      each of its sram names and that each is in the SRAM
#                      (0x20000000..); the names go to $ZL_W/sram
#   zl_verify LAYOUT   verify of the build against LAYOUT, printed and kept
#                      in $ZL_W/verify.out: every function where the plan
#                      put it, as planned
#   zl_sim_layout LAYOUT
#                      prints the base recording's mean warm misses per
#                      iteration through LAYOUT (sim --layout), as zl_plan
#                      prints the plan's
#   zl_within2 PREDICTED NAME
#                      compares a prediction with recording NAME (below)
#
# Predicted against measured. The prediction is the base recording's mean
# through the planned layout; the measurement is a new recording of the
# relinked image, whose iterations are not the same ones: the guest's own
# timers, ARP and logging land in a few iterations of each recording (at
# 12 KiB on echo_server: 197 of 199 iterations 11 misses, one 51, one 235).
# The two agree when they are within 2 % of the prediction, or when the
# difference is within two standard errors of the measured mean: below
# that no recording can tell a layout apart from its own repeat. Both
# figures and the margin are printed.

ZL_W=$TEST_TMP/w
ZL_CACHE="--target mps2-an385 --cache 16K,2,8"
ZL_N=200
mkdir -p "$ZL_W"

zl_record() {
    $CODEPLACE trace --qemu mps2-an385 "$2" --mark z_impl_zsock_sendto --udp 4242 \
        -n 200 --skip 20 --timeout 120 -o "$3"
}

zl_rec() {
    _n=$1
    rm -rf "$ZL_W/$_n" && mkdir -p "$ZL_W/$_n/zephyr" &&
    cp "$ZL_W/b/zephyr/zephyr.elf" "$ZL_W/b/zephyr/zephyr.map" "$ZL_W/b/zephyr/.config" \
        "$ZL_W/$_n/zephyr/" &&
    zl_record "$_n" "$ZL_W/$_n/zephyr/zephyr.elf" "$ZL_W/$_n.trace" >"$ZL_W/$_n.rec" 2>&1 &&
    grep -q "^stopped by: *the recorder after the $ZL_N iterations" "$ZL_W/$_n.rec" || {
        echo "zl_rec $_n: the recording did not finish; the end of $ZL_W/$_n.rec:" >&2
        tail -8 "$ZL_W/$_n.rec" >&2; return 1; }
    $CODEPLACE sim "$ZL_W/$_n/zephyr/zephyr.elf" "$ZL_W/$_n.trace" $ZL_CACHE --json \
        -o "$ZL_W/$_n.sim.json" 2>"$ZL_W/$_n.sim.err" || {
        cat "$ZL_W/$_n.sim.err" >&2; return 1; }
    python3 - "$ZL_W/$_n.sim.json" <<'EOF'
import json, sys
it = json.load(open(sys.argv[1]))["iterations"][1:]
print("%.4f" % (sum(i["misses"] for i in it) / len(it)))
EOF
}

zl_plan() {
    _b=$1
    shift
    (cd "$ZL_W/b" && $CODEPLACE plan "$ZL_W/base/zephyr/zephyr.elf" \
        --map "$ZL_W/base/zephyr/zephyr.map" --trace "$ZL_W/base.trace" $ZL_CACHE \
        --budget "$_b" -n 0 --plan-iterations 12 --time 0 --for zephyr \
        --list "$ZL_W/p$_b$ZL_SUFFIX.list" --layout "$ZL_W/p$_b$ZL_SUFFIX.layout" --json \
        -o "$ZL_W/plan$_b$ZL_SUFFIX.json" "$@") >"$ZL_W/plan$_b$ZL_SUFFIX.out" 2>&1 || {
        echo "zl_plan $_b: the end of $ZL_W/plan$_b$ZL_SUFFIX.out:" >&2
        tail -8 "$ZL_W/plan$_b$ZL_SUFFIX.out" >&2; return 1; }
    python3 - "$ZL_W/plan$_b$ZL_SUFFIX.json" <<'EOF'
import json, sys
print("%.4f" % json.load(open(sys.argv[1]))["for_zephyr"]["misses_per_iteration"])
EOF
}

zl_sim_layout() {
    (cd "$ZL_W/b" && $CODEPLACE sim "$ZL_W/base/zephyr/zephyr.elf" "$ZL_W/base.trace" $ZL_CACHE \
        --layout "$1" --json -q -o "$1.sim.json") || return 1
    python3 - "$1.sim.json" <<'EOF'
import json, sys
print("%.4f" % json.load(open(sys.argv[1]))["warm"]["misses_mean"])
EOF
}

zl_relink() {
    cp "$1" "$ZL_W/codeplace.list" && ninja -C "$ZL_W/b" >"$ZL_W/relink.log" 2>&1 || {
        tail -20 "$ZL_W/relink.log" >&2; return 1; }
}

zl_relink_sram() {
    sed -n "/^# region: sram/,/^# region: flash/p" "$1" |
        sed -n "s/^\([A-Za-z_][A-Za-z0-9_.]*\) .*/\1/p" >"$ZL_W/sram" &&
    _k=$(wc -l <"$ZL_W/sram") && test "$_k" -gt 0 &&
    zl_relink "$1" &&
    grep -q "codeplace: zephyr.elf: sram: $_k of $_k listed functions placed, 0 not" \
        "$ZL_W/relink.log" &&
    arm-none-eabi-nm "$ZL_W/b/zephyr/zephyr.elf" >"$ZL_W/nm" &&
    while read _f; do
        grep -q "^20[0-3][0-9a-f]\{5\} [tT] $_f$" "$ZL_W/nm" || {
            echo "$_f not in RAM" >&2; return 1; }
    done <"$ZL_W/sram"
}

zl_verify() {
    $CODEPLACE verify "$1" "$ZL_W/b/zephyr/zephyr.elf" --map "$ZL_W/b/zephyr/zephyr.map" \
        >"$ZL_W/verify.out" &&
    cat "$ZL_W/verify.out" &&
    grep -q "^functions: *\([0-9]*\) of \1 where the plan put them$" "$ZL_W/verify.out" &&
    grep -q "^result: *as planned (0 differences)" "$ZL_W/verify.out"
}

zl_within2() {
    python3 - "$1" "$ZL_W/$2.sim.json" <<'EOF'
import json, sys
p = float(sys.argv[1])
m = [i["misses"] for i in json.load(open(sys.argv[2]))["iterations"][1:]]
n = len(m)
mean = sum(m) / n
sd = (sum((x - mean) ** 2 for x in m) / (n - 1)) ** 0.5 if n > 1 else 0.0
se2 = 2 * sd / n ** 0.5
rel = " (%+.1f %%)" % (100 * (mean - p) / p) if p else ""
ok = abs(mean - p) <= 0.02 * p or abs(mean - p) <= se2
print("predicted %.2f measured %.2f%s; 2 %% is %.2f, two standard errors of the measured mean %.2f (%d iterations): %s"
      % (p, mean, rel, 0.02 * p, se2, n, "agree" if ok else "DISAGREE"))
sys.exit(0 if ok else 1)
EOF
}
