#!/bin/sh
# Recording speed of the virtual board on a pico-sdk 2.2.0 app run from
# reset (bench/pico-board: boot2, crt0, runtime init, then app_mark
# iterations of 32-bit and 64-bit division on the SIO divider and float
# through the boot ROM), in million instructions per second of CPU time
# (user + system, best of 3), with the per-instruction hook count
# (--count-each) as the reference.
#   sh bench/trace-pico.sh      (after `make build/codeplace`)
cd "$(dirname "$0")/.." || exit 2
[ -x build/codeplace ] || make --no-print-directory build/codeplace >/dev/null || exit 1
sdk=$(scripts/vendor pico-sdk) || exit 1
rom=$(scripts/vendor bootrom) || exit 1
out=build/bench/pico-board
if [ ! -f "$out/app.elf" ]; then
    mkdir -p "$out"
    { cmake -GNinja -S bench/pico-board -B "$out" -DPICO_SDK_PATH="$sdk" \
        -DPICO_BOARD=pico && ninja -C "$out"; } >"$out.log" 2>&1 || {
        echo "bench/trace-pico.sh: the pico-sdk build failed; see $out.log" >&2
        exit 1
    }
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" "$out/app.elf" "$rom" <<'PY'
import json, os, resource, subprocess, sys
tmp, elf, rom = sys.argv[1:4]
n = 1500
base = ["build/codeplace", "trace", "-q", elf, "--target", "rp2040", "--rom", rom,
        "--mark", "app_mark", "-n", str(n), "--json"]

def cpu(cmd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), json.loads(out)

rec = ref = None
for _ in range(3):
    r = cpu(base + ["-o", os.path.join(tmp, "run.trace")])
    rec = r if rec is None or r[0] < rec[0] else rec
    r = cpu(base + ["--count-each"])
    ref = r if ref is None or r[0] < ref[0] else ref
j = rec[1]
insns = j["instructions"]
print("trace pico-sdk rp2040 from reset: %d iterations, %d instructions (%d uncached), "
      "%d peripheral reads: %.1f M instructions/s recording (%.2f s CPU), %.1f M/s "
      "per-instruction hook count; %.3f bytes per instruction"
      % (n, insns, j["uncached_instructions"], j["periph_reads"], insns / rec[0] / 1e6,
         rec[0], ref[1]["instructions"] / ref[0] / 1e6, j["bytes"] / insns))
PY
