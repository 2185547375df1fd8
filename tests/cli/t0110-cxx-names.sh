#!/bin/sh
# C++ names: every table, CSV, JSON, SVG and HTML shows the demangled name;
# the name list keeps the linker's name with the demangled one in its
# comment, and JSON keeps the linker's name next to the demangled one. The
# fixture is tests/fixtures/cxx/cxx.cpp, built here with arm-none-eabi-g++.
. "$(dirname "$0")/lib.sh"
SRC=$CP_ROOT/tests/fixtures/cxx

if ! have arm-none-eabi-g++; then
    test_skip 'C++ names' 'arm-none-eabi-g++ missing'
    test_done
fi

build() {
    arm-none-eabi-g++ -mcpu=cortex-m0plus -mthumb -Os -ffunction-sections \
        -fno-exceptions -fno-rtti -nostdlib -T $SRC/cxx.ld -Wl,-Map=cxx.map \
        -o cxx.elf $SRC/cxx.cpp -lgcc
}

run_trace() {
    build && $CODEPLACE trace cxx.elf -t rp2040 --init codeplace_init \
        --iter codeplace_iteration -n 4 -o cxx.trace -q >/dev/null
}

test_expect_success 'image: text and CSV demangled, JSON both, its names are the linker names nm prints' '
    build &&
    $CODEPLACE image cxx.elf --map cxx.map --functions >out &&
    grep -q "  net::scale(int, int) " out &&
    grep -q "  int net::twice<int>(int) " out &&
    $CODEPLACE image cxx.elf --functions >nomap &&
    ! grep -q "_ZN3net" nomap &&
    $CODEPLACE image cxx.elf --functions --csv >f.csv &&
    grep -q "^_ZN3net5scaleEii,.*,\"net::scale(int, int)\"$" f.csv &&
    $CODEPLACE image cxx.elf --map cxx.map --functions --json >f.json &&
    arm-none-eabi-nm cxx.elf | awk "{ print \$3 }" | sort >nm.txt &&
    python3 -c "import json; print(\"\n\".join(sorted(f[\"name\"] for f in json.load(open(\"f.json\")))))" >names &&
    test $(comm -23 names nm.txt | wc -l) -eq 0 &&
    python3 -c "import json; d = {f[\"name\"]: f[\"demangled\"] for f in json.load(open(\"f.json\"))}; assert d[\"_ZN3net5scaleEi\"] == \"net::scale(int)\" and d[\"codeplace_init\"] == \"codeplace_init\", d"
'

test_expect_success 'sim: text, CSV and JSON' '
    run_trace &&
    $CODEPLACE sim cxx.trace cxx.elf -q >out &&
    grep -q "^  net::scale(int, int) " out &&
    $CODEPLACE sim cxx.trace cxx.elf --csv --by function -q >f.csv &&
    grep -q "^\"net::scale(int, int)\",0x" f.csv &&
    $CODEPLACE sim cxx.trace cxx.elf --json -q >s.json &&
    python3 -c "import json; f = {x[\"name\"]: x[\"demangled\"] for x in json.load(open(\"s.json\"))[\"functions\"]}; assert f[\"_ZN3net5twiceIiEET_S1_\"] == \"int net::twice<int>(int)\", f"
'

test_expect_success 'report: text, CSV, JSON, SVG and HTML' '
    run_trace &&
    $CODEPLACE samples cxx.trace cxx.elf --every 7 -o s.txt -q &&
    $CODEPLACE report s.txt cxx.elf --trace cxx.trace --top 0 --svg r.svg --html r.html -q >out &&
    $CODEPLACE report s.txt cxx.elf --trace cxx.trace --csv -q >r.csv &&
    $CODEPLACE report s.txt cxx.elf --trace cxx.trace --json -q >r.json &&
    for f in out r.csv r.json r.svg r.html; do
        grep -q "net::scale(int, int)" $f || { echo "not demangled in $f"; exit 1; }
        ! grep -q "_ZN3net5scaleEii" $f || { echo "mangled in $f"; exit 1; }
    done
'

test_expect_success 'diff: demangled rows' '
    build &&
    $CODEPLACE diff cxx.elf cxx.elf --all --json >d.json &&
    grep -q "\"net::scale(int, int)\"" d.json &&
    ! grep -q "_ZN3net5scaleEii" d.json
'

test_expect_success 'plan: the name list keeps the linker name, the comment has the C++ one' '
    run_trace &&
    $CODEPLACE plan cxx.elf --map cxx.map --trace cxx.trace -t rp2040 \
        --strategy hotblock --list hot.list -q >/dev/null &&
    grep -q "^_ZN3net5scaleEii  *+0x[0-9a-f]*  *\*[^ ]*(\.text\._ZN3net5scaleEii) # net::scale(int, int): " hot.list &&
    grep -q "^codeplace_iteration  *+0x00000  *\*[^ ]*(\.text\.codeplace_iteration) # [0-9]* bytes" hot.list
'

test_done
