#!/bin/sh
# The examples of `codeplace help plan`, as written (help-examples-lib.sh):
# free-running the demo from reset, then a plan of it with the default
# search time. The build directory is linked in, so that the object files
# the map names (relative to where the link ran) can be read.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/help-examples-lib.sh"
EX_CMDS="plan"

setup_plan() {
    ln -s "$CP_ROOT/build" build &&
    cp build/fw/demo-rp2040.elf fw.elf && cp build/fw/demo-rp2040.map fw.map
}

run_all

test_done
