#!/bin/sh
# Relinks one firmware build with a plan's placement snippets.
#
#   firmware/relink.sh TARGET PLACEDIR OUTPREFIX
#
# TARGET is rp2040, imxrt1062, microbit or mps2-an500 (the demo), or
# ws-mps2-an385 or ws-mps2-an500 (the whole-system echo firmware). PLACEDIR holds
# codeplace_flash.ld and/or codeplace_ram.ld (a missing one falls back to
# firmware/ld/default/). Writes OUTPREFIX.elf and OUTPREFIX.map. Relative
# paths are taken from the current directory. Same as
#   make -f mk/firmware.mk relink TARGET=... PLACE=... OUT=...
# run from the project root. Contract: docs/firmware.md.
set -eu
if [ $# -ne 3 ]; then
    echo "usage: firmware/relink.sh TARGET PLACEDIR OUTPREFIX" >&2
    exit 2
fi
abs() {
    case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$(pwd)" "$1" ;; esac
}
place=$(abs "$2")
out=$(abs "$3")
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
exec make --no-print-directory -s -f mk/firmware.mk relink TARGET="$1" PLACE="$place" OUT="$out"
