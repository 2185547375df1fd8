#!/bin/sh
# The examples of `codeplace help record` and `codeplace help counters`, as
# written (help-examples-lib.sh), in a network namespace (netns-lib.sh)
# where the scripted probe (probe-peer.py: a v6-M core in two loops, with
# the RP2040's XIP cache counters) serves OpenOCD's Tcl RPC on
# localhost:6666 and the GDB protocol on localhost:3333, the default ports,
# and codeplace's UDP echo service answers on 192.168.7.2:7.
. "$(dirname "$0")/netns-lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/help-examples-lib.sh"
EX_CMDS="record counters"

probes() {
    for p in tcl:6666 gdb:3333; do
        python3 "$CP_ROOT/tests/cli/probe-peer.py" ${p%:*}.port ${p%:*}.log \
            ${p%:*} pcsr ${p#*:} </dev/null >/dev/null 2>&1 &
        echo $! >${p%:*}.pid
    done
    for i in $(seq 1 100); do
        test -s tcl.port && test -s gdb.port && return 0
        sleep 0.05
    done
    return 1
}

setup_record() {
    cp "$CP_ROOT/build/fw/demo-rp2040.elf" fw.elf && probes
}

setup_counters() {
    probes || return 1
    codeplace bench echo --listen 192.168.7.2:7 </dev/null >echo.log 2>&1 &
    echo $! >echo.pid
    sleep 0.3
}

run_all

test_done
