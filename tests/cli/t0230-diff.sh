#!/bin/sh
# codeplace diff: two real builds (GNU ld) of a small program whose second
# version grows one function, drops one and adds one; a name list checked
# against the new build. Sizes are checked against binutils' nm.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES

build() { # VERSION -> v$VERSION.elf
    cat >v.c <<-\EOF
	volatile int sink;
	void __attribute__((noinline)) keep(int x) { sink = x; }
	#if V == 1
	void __attribute__((noinline)) grow(int x) { sink = x + 1; }
	void __attribute__((noinline)) gone(int x) { sink = x * 7; }
	#else
	void __attribute__((noinline)) grow(int x) { sink = x + 1; sink = x * 3; sink = x ^ 5; sink = x - 9; }
	void __attribute__((noinline)) fresh(int x) { sink = x << 2; }
	#endif
	void _start(void)
	{
	    keep(1); grow(2);
	#if V == 1
	    gone(3);
	#else
	    fresh(3);
	#endif
	    for (;;) ;
	}
	EOF
    arm-none-eabi-gcc -mcpu=cortex-m0plus -mthumb -Os -nostdlib \
        -ffunction-sections -Wl,--gc-sections -Wl,-e,_start -DV=$1 \
        -o v$1.elf v.c
}

size_of() { # ELF NAME
    printf '%d\n' 0x$(arm-none-eabi-nm -S "$1" | awk -v n="$2" '$4 == n { print $2 }')
}

test_expect_success 'changed, added and removed functions, with nm sizes' '
    build 1 && build 2 &&
    $CODEPLACE diff v1.elf v2.elf >out &&
    g1=$(size_of v1.elf grow) && g2=$(size_of v2.elf grow) &&
    gone=$(size_of v1.elf gone) && fresh=$(size_of v2.elf fresh) &&
    test "$g2" -gt "$g1" &&
    sed -n 3p out >summary &&
    echo "functions: 1 changed size, 1 added, 1 removed, 2 the same" >expect &&
    test_cmp expect summary &&
    printf "~ %8d %8d %+8d  grow\n" $g1 $g2 $((g2 - g1)) >expect &&
    printf "+ %8s %8d %+8d  fresh\n" - $fresh $fresh >>expect &&
    printf "%s %8d %8s %+8d  gone\n" - $gone - $((-gone)) >>expect &&
    sed -n "7,9p" out >rows &&
    test_cmp expect rows
'

test_expect_success 'a name list: how many names still resolve' '
    build 1 && build 2 &&
    cat >names.txt <<-\EOF &&
	# hot functions, placed in SRAM
	keep      # 12 bytes

	grow
	   gone
	never_existed
	# end
	EOF
    $CODEPLACE diff v1.elf v2.elf --list names.txt >out &&
    sed -n "/^name list/,\$p" out >got &&
    cat >expect <<-\EOF &&
	name list: 2 of 4 names resolve in the new build (50.0%)
	  missing: gone                             line 5 (was in the old build)
	  missing: never_existed                    line 6
	EOF
    test_cmp expect got
'

test_expect_success '--json: the same facts' '
    build 1 && build 2 &&
    printf "keep\ngone\n" >names.txt &&
    $CODEPLACE diff v1.elf v2.elf --list names.txt --json --all >d.json &&
    python3 - <<-\EOF
	import json
	d = json.load(open("d.json"))
	st = {f["name"]: f["status"] for f in d["functions"]}
	assert st == {"grow": "changed", "fresh": "added", "gone": "removed",
	              "keep": "same", "_start": "same"}, st
	assert d["name_list"]["names"] == 2 and d["name_list"]["resolve"] == 1
	assert d["name_list"]["missing"] == [{"name": "gone", "line": 2, "in_old": True}]
	for f in d["functions"]:
	    if f["status"] == "changed":
	        assert f["delta"] == f["new_size"] - f["old_size"] > 0
	EOF
'

test_expect_success 'identical builds: nothing changed' '
    $CODEPLACE diff $FX/m0.elf $FX/m0.elf >out &&
    grep -q "^functions: 0 changed size, 0 added, 0 removed, 81 the same$" out &&
    test $(wc -l <out) -eq 4
'

test_expect_success 'bad input' '
    test_exit 2 $CODEPLACE diff $FX/m0.elf 2>err &&
    test_exit 1 $CODEPLACE diff $FX/m0.elf nosuch.elf 2>err &&
    grep -q "nosuch.elf" err &&
    test_exit 1 $CODEPLACE diff $FX/m0.elf $FX/m0.elf --list nosuch.txt 2>err &&
    grep -q "cannot open .nosuch.txt." err
'

test_done
