#!/bin/sh
# Runs a QEMU reference build and prints its results in the format of
# firmware/expected.txt ("BUILD ITERATIONS RESULT", one line per checkpoint).
#
#   firmware/qemu-ref.sh microbit|mps2-an500|mps2-an385 [ELF]
#
# ELF defaults to build/fw/demo-BUILD.elf (mps2-an385: build/fw/heavy-mps2-an385.elf,
# the heavy workload's ARMv6-M reference; build/fw/heavy-mps2-an500.elf is
# its Cortex-M7 one, given as ELF). QEMU runs with semihosting and is
# stopped after 60 s (QEMU_TIMEOUT). Exit 0 when the firmware exited 0 and
# printed its checkpoints, 1 otherwise (QEMU's output goes to stderr).
set -u
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
    echo "usage: firmware/qemu-ref.sh microbit|mps2-an500|mps2-an385 [ELF]" >&2
    exit 2
fi
build=$1
case "$build" in
    microbit|mps2-an500) def=demo ;;
    mps2-an385) def=heavy ;;
    *) echo "qemu-ref: unknown build '$build' (microbit, mps2-an500 or mps2-an385)" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
elf=${2:-$root/build/fw/$def-$build.elf}
if [ ! -f "$elf" ]; then
    echo "qemu-ref: no such file '$elf' (make firmware)" >&2
    exit 1
fi
out=$(timeout "${QEMU_TIMEOUT:-60}" qemu-system-arm -M "$build" -nographic \
    -monitor none -serial none \
    -semihosting-config enable=on,target=native -kernel "$elf" 2>&1)
rc=$?
lines=$(printf '%s\n' "$out" | sed -n \
    "s/^codeplace_result after \([0-9]*\) iterations: \(0x[0-9a-f]*\)\$/$build \1 \2/p")
if [ $rc -ne 0 ] || [ -z "$lines" ]; then
    printf '%s\n' "$out" >&2
    echo "qemu-ref: $elf on $build: exit $rc" >&2
    exit 1
fi
printf '%s\n' "$lines"
