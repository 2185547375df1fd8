#!/bin/sh
# codeplace image: the image model against binutils and the map file, the
# output formats, and bad input.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES
CHECK="python3 $CP_ROOT/tests/cli/check-image.py"

for fw in m0 m0-nosec m7 m7-nosec; do
    test_expect_success "$fw: functions agree with readelf, nm and the map" "
        \$CODEPLACE image $FX/$fw.elf --map $FX/$fw.map --functions --json >f.json &&
        $CHECK $FX/$fw.elf $FX/$fw.map f.json
    "
done

test_expect_success 'the checker itself catches a wrong size' '
    $CODEPLACE image $FX/m0.elf --map $FX/m0.map --functions --json >f.json &&
    sed "s/\"size\": 6,/\"size\": 7,/" f.json >bad.json &&
    ! cmp -s f.json bad.json &&
    ! $CHECK $FX/m0.elf $FX/m0.map bad.json >out &&
    grep -q "nm says" out
'

test_expect_success 'm0: our own functions, golden' '
    $CODEPLACE image $FX/m0.elf --map $FX/m0.map --functions | grep " fx_" >out &&
    cat >expect <<-\EOF &&
	0x10000114       8  fx_scale                         (fx-m0.o) .text.fx_scale
	0x10000124      32  fx_sum                           (fx-m0.o) .text.fx_sum aka fx_sum_alias
	0x10000144       6  fx_special                       (fx-m0.o) .text.fx_special
	EOF
    test_cmp expect out
'

test_expect_success 'without -ffunction-sections our functions share .text' '
    $CODEPLACE image $FX/m0-nosec.elf --map $FX/m0-nosec.map --functions --csv >out.csv &&
    grep "^fx_sum," out.csv >line &&
    grep -q ",.text,.text,,fx-m0-nosec.o," line &&
    $CODEPLACE image $FX/m0-nosec.elf --map $FX/m0-nosec.map --functions >out.txt &&
    grep " fx_sum " out.txt | grep -q "\[shared\]"
'

test_expect_success 'summary: sections, regions, libraries' '
    $CODEPLACE image $FX/m7.elf --map $FX/m7.map >out &&
    grep -q "^arch:       v7E-M$" out &&
    grep -E -q "^  \.text +0x600000[0-9a-f]{2} " out &&
    grep -E -q "^  \.data +0x20000000  0x6000" out &&
    grep -E -q "^  flash +0x60000000 +8,388,608 " out &&
    grep -E -q "^  libc\.a +[0-9]+ " out &&
    grep -E -q "^  libgcc\.a " out
'

test_expect_success 'summary --json is valid and adds up' '
    $CODEPLACE image $FX/m0.elf --map $FX/m0.map --json >s.json &&
    $CODEPLACE image $FX/m0.elf --map $FX/m0.map --functions --json >f.json &&
    python3 - <<-\EOF
	import json
	s = json.load(open("s.json")); f = json.load(open("f.json"))
	assert s["functions"] == len(f), (s["functions"], len(f))
	assert sum(l["bytes"] for l in s["libraries"]) == sum(x["size"] for x in f)
	assert {r["name"] for r in s["regions"]} == {"flash", "ram"}
	assert s["arch"] == "v6S-M"
	EOF
'

test_expect_success 'without a map: no libraries, still functions' '
    $CODEPLACE image $FX/m0.elf --functions --csv >out &&
    grep -q "^fx_special,0x10000144,6,,.text,,,,fx_special$" out
'

test_expect_success '--sort size puts the largest first' '
    $CODEPLACE image $FX/m0.elf --functions --sort size --csv | sed -n 2,3p | cut -d, -f3 >sizes &&
    test $(sed -n 1p sizes) -ge $(sed -n 2p sizes)
'

test_expect_success '--lookup maps addresses to functions (Thumb bit ignored)' '
    $CODEPLACE image $FX/m0.elf --lookup 0x10000145 --lookup 0x10000148 --lookup 0x0 >out &&
    cat >expect <<-\EOF &&
	0x10000145 fx_special+0x0
	0x10000148 fx_special+0x4
	0x00000000 ?
	EOF
    test_cmp expect out
'

for bad in empty text header-only truncated x86 stripped; do
    test_expect_success "bad ELF ($bad): clear error naming the file, exit 1" "
        test_exit 1 \$CODEPLACE image $FX/bad/$bad.elf 2>err &&
        grep -q '^codeplace: error: .*$bad.elf' err
    "
done

test_expect_success 'missing file: exit 1, names it' '
    test_exit 1 $CODEPLACE image nosuch.elf 2>err &&
    grep -q "cannot open .nosuch.elf.: No such file" err
'

test_expect_success 'a map of another build is refused' '
    test_exit 1 $CODEPLACE image $FX/m0.elf --map $FX/bad/other.map 2>err &&
    grep -q "does not match" err &&
    test_exit 1 $CODEPLACE image $FX/m0.elf --map $FX/bad/moved.map 2>err &&
    grep -q "fx_special is at 0x10000ff0 in the map" err
'

test_expect_success 'a file that is not a map is refused' '
    test_exit 1 $CODEPLACE image $FX/m0.elf --map $FX/bad/notmap.map 2>err &&
    grep -q "not a GNU ld map file" err &&
    test_exit 1 $CODEPLACE image $FX/m0.elf --map $FX/m0.elf 2>err &&
    grep -q "not a GNU ld map file" err
'

test_expect_success 'usage errors exit 2' '
    test_exit 2 $CODEPLACE image 2>err &&
    test_exit 2 $CODEPLACE image $FX/m0.elf --sort bogus 2>err &&
    test_exit 2 $CODEPLACE image $FX/m0.elf --csv 2>err &&
    grep -q "goes with --functions" err
'

test_done
