#!/bin/sh
# Whole-system recording in QEMU: codeplace-qemu.so (trace --qemu) against
# the execution-log path (-d exec,nochain -singlestep into a FIFO read by
# trace --from-qemu), side by side on the same firmware and iterations, and
# plain QEMU without recording. Speed in million instructions per second of
# CPU time (user + system of every process of the run; best of 3, the exec-log path once); trace
# size in bytes per instruction next to the unicorn recorder's for the same
# object code (demo-imxrt1062.elf is demo-mps2-an500.elf's code linked for
# the i.MX RT1062 board).
#   sh bench/qemu.sh [ITERATIONS]     (default 10; after make build/codeplace
#                                      build/codeplace-qemu.so firmware)
cd "$(dirname "$0")/.." || exit 2
[ -f build/fw/demo-mps2-an500.elf ] || make --no-print-directory firmware >/dev/null || exit 1
make --no-print-directory build/codeplace build/codeplace-qemu.so >/dev/null || exit 1
command -v qemu-system-arm >/dev/null || { echo "qemu: qemu-system-arm missing"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp" "${1:-10}" <<'PY'
import json, os, resource, subprocess, sys
tmp, n = sys.argv[1], int(sys.argv[2])
elf = "build/fw/demo-mps2-an500.elf"
Q = ["qemu-system-arm", "-M", "mps2-an500", "-display", "none", "-monitor", "none",
     "-serial", "none", "-semihosting-config", "enable=on,target=native", "-kernel", elf]

def cpu(fn):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = fn()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), out

def best(fn, k=3):
    r = None
    for _ in range(k):
        t, out = cpu(fn)
        if r is None or t < r[0]:
            r = (t, out)
    return r

def plugin():
    out = subprocess.run(["build/codeplace", "trace", "-q", "--qemu", "mps2-an500", elf,
                          "--mark", "codeplace_mark", "-n", str(n), "-o", tmp + "/p.trace",
                          "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)

def execlog():
    fifo = tmp + "/q.fifo"
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
    q = subprocess.Popen(Q + ["-d", "exec,nochain", "-singlestep", "-D", fifo],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    out = subprocess.run(["build/codeplace", "trace", "--from-qemu", fifo, "--elf", elf,
                          "--mark", "codeplace_mark", "-n", str(n), "-o", tmp + "/l.trace",
                          "--per-iteration"], capture_output=True, text=True, check=True).stdout
    q.kill()
    q.wait()
    return out

def plain():
    subprocess.run(Q, capture_output=True, check=True)

def info(path):
    return json.loads(subprocess.run(["build/codeplace", "trace", "--info", path, "--json",
                                      "--per-iteration"], capture_output=True, text=True,
                                     check=True).stdout)

tp, pj = best(plugin)
tl, _ = best(execlog, 1)
pi, li = info(tmp + "/p.trace"), info(tmp + "/l.trace")
same = pi["per_iteration"] == li["per_iteration"]
ins = pi["instructions"]
lins = li["instructions"]
print("qemu mps2-an500 demo, %d iterations, %d instructions (%d after the first mark)"
      % (n, ins, ins - pi["pre_instructions"]))
print("  plugin (trace --qemu):  %.1f M instructions/s (%.2f s CPU), %.3f bytes per instruction, %d flash reads"
      % (ins / tp / 1e6, tp, pi["bytes"] / ins, pi["data_reads"]))
print("  exec log (FIFO import): %.2f M instructions/s (%.2f s CPU)" % (lins / tl / 1e6, tl))
print("  plugin / exec log:      %.0fx; per-iteration counts %s" %
      ((ins / tp) / (lins / tl), "equal" if same else "DIFFER"))
tq, _ = best(plain)
print("  plain QEMU, whole run (300 iterations and exit): %.2f s CPU" % tq)
t300, _ = best(lambda: subprocess.run(["build/codeplace", "trace", "-q", "--qemu", "mps2-an500",
                                        elf, "--mark", "codeplace_mark", "-n", "299", "-o",
                                        tmp + "/w.trace"], capture_output=True, check=True), 1)
w = info(tmp + "/w.trace")
print("  plugin, 299 iterations:  %.1f M instructions/s (%.2f s CPU, %d instructions)"
      % (w["instructions"] / t300 / 1e6, t300, w["instructions"]))
uo = subprocess.run(["build/codeplace", "trace", "-q", "build/fw/demo-imxrt1062.elf", "--target",
                     "imxrt1062", "--mark", "codeplace_mark", "-n", str(n), "-o", tmp + "/u.trace",
                     "--json"], capture_output=True, text=True, check=True).stdout
u = info(tmp + "/u.trace")
print("  size: plugin %.3f, unicorn (demo-imxrt1062.elf, same code, %d instructions) %.3f bytes per instruction"
      % (pi["bytes"] / ins, u["instructions"], u["bytes"] / u["instructions"]))
if not same:
    sys.exit(1)
PY
