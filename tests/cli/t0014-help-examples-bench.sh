#!/bin/sh
# The examples of `codeplace help bench` and its subcommands, as written
# (help-examples-lib.sh), in a network namespace where 192.168.7.2 is an
# address of the loopback and codeplace's own UDP echo service answers on
# its port 7 (netns-lib.sh).
. "$(dirname "$0")/netns-lib.sh"
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/help-examples-lib.sh"
EX_CMDS="bench bench_udp bench_latency bench_sink bench_usbmon bench_compare bench_echo"

# the board's echo service, stopped after the examples (echo.pid)
echo_service() {
    codeplace bench echo --listen 192.168.7.2:7 </dev/null >echo.log 2>&1 &
    echo $! >echo.pid
    sleep 0.3
}

setup_bench() { echo_service; }
setup_bench_udp() { echo_service; }
setup_bench_latency() { :; }
setup_bench_sink() { :; }
setup_bench_usbmon() { :; }
setup_bench_echo() { :; }
setup_bench_compare() {
    echo_service &&
    codeplace bench udp 192.168.7.2 --rates 1000,2000 --label stock --csv -o stock.csv -q &&
    codeplace bench udp 192.168.7.2 --rates 1000,2000 --label placed --csv -o placed.csv -q
}

run_all

test_done
