# The examples of the commands' --help, run as written (tests/cli/t001[1-5]-help-
# examples*.sh). Each test file names the commands whose examples it runs
# (EX_CMDS, one line in the file, which t0011 reads to check that every
# command's examples are run by one of them) and gives, per command, a
# setup_<command> function (spaces and dashes as _) that puts the files
# the examples name into the current directory. The examples run there,
# one after the other in one shell, with `codeplace` on PATH (the build
# without sanitizers, build/codeplace: what a user runs; the sanitizer
# build runs the same code in the other tests). Each must exit 0, unless
# it is in NOT_HERE (cannot run on this machine, with the reason) or
# INTERRUPT (runs until Ctrl-C: it gets SIGINT after the given seconds).
EXAMPLES=$TEST_TMP/examples
python3 "$CP_ROOT/tests/cli/help-examples.py" "$CODEPLACE" >"$EXAMPLES" ||
    echo "not ok - the examples could not be read from codeplace help"
mkdir -p "$TEST_TMP/bin" && ln -sf "$CP_ROOT/build/codeplace" "$TEST_TMP/bin/codeplace"
PATH=$TEST_TMP/bin:$PATH
export PATH

# Examples that cannot run here: "EXAMPLE|REASON|STAND-IN" lines, matched
# exactly; the stand-in (run instead, it must succeed) makes what the
# example would have made.
NOT_HERE='tcpdump -i usbmon1 -w ping.pcap & ping -c 100 192.168.7.2; kill %1|a usbmon capture needs the usbmon module and a USB network device|"$CP_ROOT/build/tests/mkusbcap" ping.pcap --n 100 --icmp
(relink with place/codeplace_flash.ld and place/codeplace_ram.ld)|a step, not a command|sh "$CP_ROOT/firmware/relink.sh" rp2040 place relinked'

# Examples that run until Ctrl-C: "EXAMPLE|SECONDS" (0 without SIGINT).
INTERRUPT='codeplace record --gdb localhost:3333 --elf fw.elf --target rp2040 --rate 1000 -o samples.txt|2'

# examples_of CMD: the examples of one command, one per line
examples_of() {
    awk -F '\t' -v c="$1" '$1 == c { print $2 }' "$EXAMPLES"
}

# run_examples CMD: in a fresh directory, setup_CMD then every example of
# CMD; prints each with its exit code; 1 when one failed or none ran.
run_examples() {
    d=$(pwd)
    setup=setup_$(echo "$1" | tr ' -' '__')
    "$setup" >setup.log 2>&1 || { echo "setup of '$1' failed:"; cat setup.log; return 1; }
    examples_of "$1" >list
    test -s list || { echo "'$1' has no example"; return 1; }
    bad=0 bg=""
    while IFS= read -r ex; do
        why=$(printf '%s\n' "$NOT_HERE" | awk -F '|' -v e="$ex" '$1 == e { print $2 }')
        if [ -n "$why" ]; then
            echo "not run here: $ex ($why)"
            standin=$(printf '%s\n' "$NOT_HERE" | awk -F '|' -v e="$ex" '$1 == e { print $3 }')
            if [ -n "$standin" ] && ! eval "$standin" </dev/null >standin.log 2>&1; then
                echo "its stand-in failed: $standin"
                cat standin.log
                bad=1
            fi
            continue
        fi
        secs=$(printf '%s\n' "$INTERRUPT" | awk -F '|' -v e="$ex" '$1 == e { print $2 }')
        case "$ex" in
        *" &")
            eval "$ex" </dev/null >>bg.log 2>&1
            bg="$bg $!"
            sleep 0.5
            echo "started: $ex"
            continue ;;
        esac
        if [ -n "$secs" ]; then
            sh -c "exec $ex" </dev/null >out.log 2>&1 &
            pid=$!
            sleep "$secs"
            kill -INT $pid
            wait $pid
            rc=$?
        else
            timeout 300 sh -c "$ex" </dev/null >out.log 2>&1
            rc=$?
        fi
        echo "exit $rc: $ex"
        if [ $rc -ne 0 ]; then
            sed 's/^/    /' out.log | tail -20
            bad=1
        fi
        cd "$d" || return 1
    done <list
    for p in $bg $(cat *.pid 2>/dev/null); do kill $p 2>/dev/null; wait $p 2>/dev/null; done
    return $bad
}

# One test per command of EX_CMDS.
run_all() {
    for c in $EX_CMDS; do
        c=$(echo "$c" | tr _ ' ')
        test_expect_success "the examples of 'codeplace help $c' run as written" "
            run_examples '$c'
        "
    done
}
