#!/bin/sh
# codeplace apply: a name list planned on one build of the demo firmware,
# carried to a second build that differs (a changed function, a clone whose
# number changed, a function the linker now drops), linked by real GNU ld
# with the emitted snippets, run and simulated.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
ELF=$FW/demo-rp2040.elf MAP=$FW/demo-rp2040.map
HARNESS="--init codeplace_init --iter codeplace_iteration --result codeplace_result"
D=$TEST_TMP/d
mkdir -p $D

# The second build, from a copy of the demo sources with a small patch:
# demo_crc32 gains a NULL check (changed), filter.c no longer calls
# demo_level_db (its section is dropped by --gc-sections), and the clone
# field.constprop.0 is renumbered field.constprop.1, as GCC does when it
# makes another clone of the function first in a rebuild.
build_v2() {
    mkdir -p $D/src && cp -r "$CP_ROOT/firmware" "$CP_ROOT/mk" $D/src/ &&
    cd $D/src &&
    python3 - <<-\PY &&
	import re
	p = "firmware/demo/crc32.c"; s = open(p).read()
	assert "    crc = ~crc;\n    while (len--)" in s
	s = s.replace("    crc = ~crc;\n    while (len--)", "    if (!data)\n        return crc;\n    crc = ~crc;\n    while (len--)")
	open(p, "w").write(s)
	p = "firmware/demo/filter.c"; s = open(p).read()
	assert "demo_level_db(s->vib)" in s
	open(p, "w").write(s.replace("demo_level_db(s->vib)", "s->vib"))
	PY
    make -s -f mk/firmware.mk FW_OUT=out out/demo-rp2040.elf &&
    arm-none-eabi-objcopy --redefine-sym field.constprop.0=field.constprop.1 \
        --rename-section .text.field.constprop.0=.text.field.constprop.1 \
        out/obj/m0/demo/sensor.o &&
    rm out/demo-rp2040.elf && make -s -f mk/firmware.mk FW_OUT=out out/demo-rp2040.elf
}
(build_v2) >$D/build.log 2>&1 || { echo "not ok - the second build failed"; cat $D/build.log; }
V2=$D/src/out/demo-rp2040.elf V2MAP=$D/src/out/demo-rp2040.map

# The plan, on the first build.
$CODEPLACE trace $ELF --target rp2040 $HARNESS -n 4 -q -o $D/v1.trace >/dev/null &&
$CODEPLACE plan $ELF --map $MAP --trace $D/v1.trace --target rp2040 --budget 8K \
    --strategy combined --search-moves 4000 --descent-passes 0 --time 0 --list $D/hot.list \
    --layout $D/v1-plan.layout -q >/dev/null || echo "not ok - the plan failed"

warm() { # TRACE ELF MAP [LAYOUT]
    $CODEPLACE sim $1 --elf $2 --map $3 ${4:+--layout $4} --json -q |
        python3 -c 'import json, sys; print(json.load(sys.stdin)["warm"]["misses_mean"])'
}

test_expect_success 'the builds differ as the test needs' '
    arm-none-eabi-nm -S $ELF >nm1 && arm-none-eabi-nm -S $V2 >nm2 &&
    grep -q " field.constprop.0$" nm1 && grep -q " field.constprop.1$" nm2 &&
    grep -q " demo_level_db$" nm1 && ! grep -q " demo_level_db$" nm2 &&
    test "$(grep " demo_crc32$" nm1 | cut -d" " -f2)" != "$(grep " demo_crc32$" nm2 | cut -d" " -f2)" &&
    grep -q "^field.constprop.0 .*set [0-9]" $D/hot.list &&
    grep -q "^demo_level_db " $D/hot.list && grep -q "^demo_crc32 " $D/hot.list
'

test_expect_success 'on the same build, apply gives the plan layout back' '
    $CODEPLACE apply $D/hot.list $ELF --map $MAP --layout a.layout --check >out &&
    grep -q "^resolved:  [0-9]* of [0-9]* names (0 renamed), 0 lost$" out &&
    grep -v "^#" $D/v1-plan.layout | cut -d" " -f1-3 | sort >want &&
    grep -v "^#" a.layout | cut -d" " -f1-3 | sort >got &&
    test_cmp want got
'

test_expect_success 'a colouring with the default padding comes back exactly on the same build' '
    $CODEPLACE plan $ELF --map $MAP --trace $D/v1.trace --target rp2040 \
        --strategy colour --search-moves 4000 --descent-passes 0 --time 0 --list c.list \
        --layout c-plan.layout -q >/dev/null &&
    grep -q "^# block end: [0-9]* bytes" c.list &&
    python3 - c-plan.layout <<-\PY &&
	# the test needs a gap of half a way (4 KiB of the 16 KiB 2-way cache)
	# or more between two hot sections, and none of a whole way
	import sys
	rows = sorted((int(f[2], 16), int(f[3])) for f in
	              (l.split() for l in open(sys.argv[1]) if not l.startswith("#"))
	              if f[1] == "flash")
	gaps = [b[0] - (a[0] + a[1]) for a, b in zip(rows, rows[1:])]
	assert max(gaps) >= 4096, max(gaps)
	assert max(gaps) < 8192, max(gaps)
	PY
    $CODEPLACE apply c.list $ELF --map $MAP --layout c.layout --check >out &&
    grep -v "^#" c-plan.layout | cut -d" " -f1-3 | sort >want &&
    grep -v "^#" c.layout | cut -d" " -f1-3 | sort >got &&
    test_cmp want got &&
    grep "^# stubs:" c-plan.layout | sed "s/fast_bytes.*//" >want &&
    grep "^# stubs:" c.layout | sed "s/fast_bytes.*//" >got &&
    test_cmp want got
'

test_expect_success 'the ELF as --elf (-e), the target as -t, the layout as -l' '
    $CODEPLACE apply -e $ELF $D/hot.list -m $MAP -t rp2040 -l b.layout --check >out &&
    grep -q "^resolved:  [0-9]* of [0-9]* names (0 renamed), 0 lost$" out &&
    grep -v "^#" $D/v1-plan.layout | cut -d" " -f1-3 | sort >want &&
    grep -v "^#" b.layout | cut -d" " -f1-3 | sort >got &&
    test_cmp want got &&
    test_exit 2 $CODEPLACE apply $D/hot.list $ELF --elf $ELF 2>err &&
    grep -q "the ELF is given twice" err &&
    test_exit 1 $CODEPLACE apply $D/hot.list nosuch.elf 2>err &&
    grep -q "nosuch.elf" err
'

test_expect_success 'the target as a file (a board of your own), and an unknown one' '
    sed "s/^name  *rp2040$/name myboard/" $CP_ROOT/targets/rp2040.target >my.target &&
    grep -q "^name myboard$" my.target &&
    $CODEPLACE apply $D/hot.list $ELF --map $MAP --target my.target -l c.layout \
        --check >out 2>err &&
    grep -q "planned for rp2040; applying it for myboard" err &&
    grep -v "^#" $D/v1-plan.layout | cut -d" " -f1-3 | sort >want &&
    grep -v "^#" c.layout | cut -d" " -f1-3 | sort >got &&
    test_cmp want got &&
    test_must_fail $CODEPLACE apply $D/hot.list $ELF --target nosuchboard 2>err &&
    grep -q "nosuchboard" err
'

test_expect_success 'the second build: a renumbered clone resolves, the dropped function is named' '
    $CODEPLACE apply $D/hot.list $V2 --map $V2MAP --emit place >out &&
    grep -q "^  field.constprop.0 *-> field.constprop.1 *renumbered clone$" out &&
    grep -q "^  demo_level_db  *[a-z]*  *dropped by the linker: .text.demo_level_db is among the map.s discarded input sections" out &&
    grep -q "^resolved:  [0-9]* of [0-9]* names (1 renamed), [1-9][0-9]* lost$" out &&
    grep -q "field.constprop.1" place/codeplace_flash.ld &&
    grep -q "(.text.demo_crc32)" place/codeplace_flash.ld place/codeplace_ram.ld &&
    ! grep -q "demo_level_db" place/codeplace_flash.ld place/codeplace_ram.ld &&
    grep -q "^# predicted: nothing: applied from the name list" place/codeplace.list
'

test_expect_success '--check: lost names exit 1 and say how many' '
    test_exit 1 $CODEPLACE apply $D/hot.list $V2 --map $V2MAP --check >out 2>err &&
    grep -q "^codeplace: error: [1-9][0-9]* of the [0-9]* names of .*hot.list are not placed in .*demo-rp2040.elf$" err
'

test_expect_success 'JSON: every name with how it resolved' '
    $CODEPLACE apply $D/hot.list $V2 --map $V2MAP --json >j.json &&
    python3 - j.json <<-\PY
	import json, sys
	j = json.load(open(sys.argv[1]))
	e = {x["name"]: x for x in j["entries"]}
	assert e["field.constprop.0"]["how"] == "renumbered clone" and e["field.constprop.0"]["now"] == "field.constprop.1"
	assert e["demo_level_db"]["placed"] is False and e["demo_level_db"]["how"] == "dropped by the linker"
	assert e["demo_crc32"]["how"] == "same" and e["demo_crc32"]["placed"]
	assert j["lost"] == sum(not x["placed"] for x in j["entries"]) and j["renamed"] == 1
	assert j["names"] == j["resolved"] + j["lost"] and j["fast_bytes"] <= j["budget"] == 8192
	PY
'

test_expect_success 'names gone, clones gone, functions now cloned, unknown regions' '
    { cat $D/hot.list; echo "no_such_function   # 10 bytes, set 5"; \
      echo "demo_rand.constprop.3"; echo "field"; } >more.list &&
    $CODEPLACE apply more.list $V2 --map $V2MAP >out &&
    grep -q "^  no_such_function *flash  gone: not in the new build (removed, renamed, or inlined)$" out &&
    grep -q "^  demo_rand.constprop.3 *-> demo_rand *clone gone, original used$" out &&
    grep -q "^  field *-> field.constprop.1 *now a clone$" out &&
    { cat $D/hot.list; echo "# region: dtcm"; echo "x"; } >bad.list &&
    test_exit 1 $CODEPLACE apply bad.list $V2 --map $V2MAP 2>err &&
    grep -q "^codeplace: error: bad.list:[0-9]*: region .dtcm. is neither flash nor rp2040.s fast memory (sram)$" err
'

test_expect_success 'GNU ld links the snippets: same result, placed as said, fewer misses' '
    $CODEPLACE apply $D/hot.list $V2 --map $V2MAP --emit place --layout p.layout -q >/dev/null &&
    here=$PWD && (cd $D/src && make -s -f mk/firmware.mk FW_OUT=out relink \
        TARGET=rp2040 PLACE=$here/place OUT=$here/placed) &&
    $CODEPLACE trace $V2 --target rp2040 $HARNESS -n 4 -q -o v2.trace >v2.txt &&
    $CODEPLACE trace placed.elf --target rp2040 $HARNESS -n 4 -q -o placed.trace >placed.txt &&
    grep "^result:" v2.txt >r1 && grep "^result:" placed.txt >r2 && test_cmp r1 r2 &&
    arm-none-eabi-nm placed.elf >nm &&
    python3 - p.layout nm <<-\PY &&
	import sys
	nm = {}
	for l in open(sys.argv[2]):
	    f = l.split()
	    if len(f) == 3: nm.setdefault(f[2], int(f[0], 16))
	n = ram = 0
	for l in open(sys.argv[1]):
	    if l.startswith(("#", "@")): continue
	    name, region, place = l.split()[:3]
	    if region == "flash":
	        assert nm[name] & ~1 == int(place, 16), (name, hex(nm[name]), place)
	    else:
	        # the layout file gives fast-memory places only roughly
	        assert region == "sram" and 0x20000000 <= nm[name] < 0x20042000, (name, hex(nm[name]))
	        ram += 1
	    n += 1
	assert n > 50 and ram >= 5 and nm["field.constprop.1"] < 0x10010000, (n, ram)
	PY
    s1=$(warm $D/v1.trace $ELF $MAP) && p1=$(warm $D/v1.trace $ELF $MAP $D/v1-plan.layout) &&
    s2=$(warm v2.trace $V2 $V2MAP) && p2=$(warm placed.trace placed.elf placed.map) &&
    echo "first build: stock $s1, planned $p1; second build: stock $s2, applied and relinked $p2" &&
    python3 -c "import sys; s1, p1, s2, p2 = map(float, sys.argv[1:]); k = (s2 - p2) / (s1 - p1); print(\"gain kept: %.0f %%\" % (100 * k)); assert p2 < 0.6 * s2 and k > 0.7, k" $s1 $p1 $s2 $p2
'

test_done
