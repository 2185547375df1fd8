#!/bin/sh
# The examples of `codeplace help verify`, as written (help-examples-lib.sh):
# a plan of the demo, its relink (firmware/relink.sh, the step the help
# describes), and verify of the relinked image against the plan.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/help-examples-lib.sh"
EX_CMDS="verify"

setup_verify() {
    ln -s "$CP_ROOT/build" build &&
    cp build/fw/demo-rp2040.elf fw.elf && cp build/fw/demo-rp2040.map fw.map &&
    codeplace trace -q fw.elf --target rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 3 -o run.trace
}

run_all

test_done
