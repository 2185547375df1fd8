#!/bin/sh
# Probe sampling rate against QEMU's gdbstub (mps2-an500, Cortex-M7, the
# probe test firmware, -icount shift=3): halting samples per second as fast
# as the link allows over loopback, and the time the target is stopped per
# sample. Needs build/codeplace and the probe fixtures (make probe-fixtures).
cd "$(dirname "$0")/.."
make --no-print-directory build/codeplace probe-fixtures >/dev/null || exit 1
TEST_TMP=$(mktemp -d)
trap 'rm -rf "$TEST_TMP"' EXIT
CP_FIXTURES=build/fixtures
. tests/cli/probe-lib.sh
start_qemu mps2-an500 "$FW/fw-m7.elf" || { echo "probe: QEMU did not start"; exit 1; }
./build/codeplace record -q --gdb 127.0.0.1:$PORT --elf "$FW/fw-m7.elf" \
    --halt --duration 5 -o "$TEST_TMP/s.txt" --json >"$TEST_TMP/r.json"
rc=$?
stop_qemu
[ $rc -eq 0 ] || exit 1
python3 - "$TEST_TMP/r.json" <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	f = {x["name"]: x["samples"] for x in j["functions"]}
	a, b = f.get("fw_loop_a", 0), f.get("fw_loop_b", 0)
	print("probe (QEMU gdbstub, halting): %d samples in %.1f s = %.0f samples/s, "
	      "%.0f us stopped per sample, fw_loop_a share %.1f%% (expected 75%%)"
	      % (j["samples"], j["seconds"], j["rate_hz"], j["stop_per_sample_us"],
	         100.0 * a / max(a + b, 1)))
	PY
