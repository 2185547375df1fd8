#!/bin/sh
# The protocol workload (firmware/proto/: C99 on picolibc, a binary frame
# protocol over a COBS link, ChaCha20-Poly1305, AES-CTR + CMAC, HMAC and
# HKDF over SHA-256, CBOR, JSON, printf-style logging into a ring): the
# builds, the cryptography against the RFC test vectors on the host, the
# host build of the same sources and the QEMU references against
# firmware/expected-proto.txt, the virtual board agreeing with them on
# both boards in harness and free-run mode, the code per iteration
# (30+ KiB) and a relink.
. "$(dirname "$0")/lib.sh"
FW=$CP_ROOT/build/fw
EXPECTED=$CP_ROOT/firmware/expected-proto.txt
QREF=$CP_ROOT/firmware/qemu-ref.sh
export QEMU_TIMEOUT=60
# unicorn keeps part of its code cache until exit (RAM code is written)
export LSAN_OPTIONS="suppressions=$CP_ROOT/tests/cli/lsan-unicorn.supp"
HARNESS="--init codeplace_init --iter codeplace_iteration --result codeplace_result"

for b in rp2040 imxrt1062 mps2-an385 mps2-an500; do
    test_expect_success "proto-$b: ELF and map are built" "
        test -s $FW/proto-$b.elf && test -s $FW/proto-$b.map &&
        grep -q '^Memory Configuration' $FW/proto-$b.map
    "
done

test_expect_success 'proto-rp2040: picolibc, libgcc and libm code next to its own' '
    grep -q "/thumb/v6-m/nofp/libc.a(" $FW/proto-rp2040.map &&
    grep -q "/thumb/v6-m/nofp/libgcc.a(" $FW/proto-rp2040.map &&
    grep -q picolibc $FW/proto-rp2040.map &&
    ! grep -q "libstdc++" $FW/proto-rp2040.map &&
    arm-none-eabi-nm $FW/proto-rp2040.elf >syms &&
    for f in vfprintf vfscanf strtod strtoul qsort gmtime_r sqrt __aeabi_dmul __aeabi_uldivmod \
             chacha20_block poly1305_finish aes128_encrypt cmac_final hmac_sha256 hkdf_sha256 \
             frame_parse link_unwrap cbor_next json_check h_diag; do
        grep -q " $f\$" syms || { echo "missing $f"; return 1; }
    done
'

test_expect_success 'proto-imxrt1062: ARMv7E-M (v7E-M), soft float' '
    readelf -A $FW/proto-imxrt1062.elf >attr &&
    grep -q "Tag_CPU_arch: v7E-M" attr && ! grep -q "Tag_FP_arch" attr
'

test_expect_success 'host: the cryptography gives the RFC and FIPS test vectors' '
    $FW/host/proto-vectors >out &&
    cat >expect <<-\EOT &&
	ok   RFC 8439 2.3.2 ChaCha20 block
	ok   RFC 8439 2.4.2 ChaCha20 encryption
	ok   RFC 8439 2.5.2 Poly1305
	ok   RFC 8439 2.8.2 AEAD ciphertext
	ok   RFC 8439 2.8.2 AEAD tag
	ok   AEAD open refuses a changed ciphertext byte
	ok   AEAD open restores the plaintext
	ok   FIPS 180-2 B.1 SHA-256 "abc"
	ok   FIPS 180-2 B.2 SHA-256 448 bits
	ok   RFC 4231 4.2 HMAC-SHA-256 case 1
	ok   RFC 4231 4.3 HMAC-SHA-256 case 2
	ok   RFC 4231 4.7 HMAC-SHA-256 case 6 (long key and data)
	ok   RFC 5869 A.1 HKDF-SHA-256
	ok   RFC 5869 A.3 HKDF-SHA-256, no salt, no info
	ok   RFC 5869 A.2 HKDF-SHA-256, longer inputs
	ok   FIPS-197 C.1 AES-128
	ok   RFC 4493 4 AES-CMAC example 1 (empty)
	ok   RFC 4493 4 AES-CMAC example 2 (16 bytes)
	ok   RFC 4493 4 AES-CMAC example 3 (40 bytes)
	ok   RFC 4493 4 AES-CMAC example 4 (64 bytes)
	ok   CRC-32 and CRC-16/CCITT-FALSE of "123456789"
	0 failed
	EOT
    test_cmp expect out
'

test_expect_success 'expected-proto.txt: every line is BUILD ITERATIONS 0xRESULT, the builds agree' '
    grep -v -E "^(#|$)" $EXPECTED >lines &&
    test $(wc -l <lines) -eq 9 &&
    ! grep -v -E "^(host|mps2-an385|mps2-an500) (1|10|300) 0x[0-9a-f]{8}$" lines &&
    test $(cut -d" " -f2,3 lines | sort -u | wc -l) -eq 3
'

test_expect_success 'host build: results equal expected-proto.txt' "
    for n in 1 10 300; do
        $FW/host/proto-host \$n || return 1
    done | sed -n 's/^codeplace_result after \\([0-9]*\\) iterations: \\(0x[0-9a-f]*\\)\$/host \\1 \\2/p' >out &&
    grep '^host ' $EXPECTED >expect &&
    test_cmp expect out
"

test_expect_success 'QEMU mps2-an385 (the rp2040 object code): results equal expected-proto.txt' "
    $QREF mps2-an385 $FW/proto-mps2-an385.elf >out &&
    grep '^mps2-an385 ' $EXPECTED >expect &&
    test_cmp expect out
"

test_expect_success 'QEMU mps2-an500 (the imxrt1062 object code): results equal expected-proto.txt' "
    $QREF mps2-an500 $FW/proto-mps2-an500.elf >out &&
    grep '^mps2-an500 ' $EXPECTED >expect &&
    test_cmp expect out
"

test_expect_success 'proto-rp2040 and proto-mps2-an385 run the same object code' '
    for f in codeplace_iteration chacha20_block vfprintf strtod; do
        arm-none-eabi-nm -S $FW/proto-rp2040.elf | awk -v f=$f "\$4 == f { print \$2 }" >a &&
        arm-none-eabi-nm -S $FW/proto-mps2-an385.elf | awk -v f=$f "\$4 == f { print \$2 }" >b &&
        test -s a && test_cmp a b || return 1
    done
'

test_expect_success 'host build: the log shows every message type handled and every fault refused' '
    $FW/host/proto-host -l 2 | tr -d "\000" >log &&
    for m in CONNECT SUBSCRIBE PUBLISH TELEMETRY CONFIG EVENT PINGREQ UNSUBSCRIBE DIAG DISCONNECT; do
        grep -q "^\[00002\.[0-9]*\] D rx $m " log || { echo "no $m"; return 1; }
    done &&
    for e in auth critical type link length; do
        grep -q "^\[00002\.[0-9]*\] W rx packet at [0-9]* ([0-9]* bytes, type [0-9]*): $e\$" log ||
            { echo "no $e"; return 1; }
    done &&
    test $(grep -c "^\[00002\.[0-9]*\] W rx .*): auth\$" log) -eq 2 &&
    grep -q "^\[00002\.[0-9]*\] I time 2026-01-01T02:00:14\.551Z step +3607[0-9]* ms\$" log &&
    grep -q "^\[00002\.[0-9]*\] I   json [0-9]* bytes, [0-9]* numbers, crc [0-9a-f]*, check [0-9a-f]*: {\"seq\":2," log &&
    ! grep -q "^\[[0-9.]*\] E " log
'

ref1=$(awk '$1 == "host" && $2 == 1 { print $3 }' "$EXPECTED")
ref10=$(awk '$1 == "host" && $2 == 10 { print $3 }' "$EXPECTED")
test_expect_success 'virtual board, harness mode: rp2040 and imxrt1062 give the host result after 1 and 10' "
    test -n '$ref1' && test -n '$ref10' &&
    for t in rp2040 imxrt1062; do
        $CODEPLACE trace $FW/proto-\$t.elf --target \$t $HARNESS -n 1 -q -o \$t-1.trace >out &&
        grep -q '^result: *codeplace_result = $ref1 ' out || { cat out; return 1; }
        $CODEPLACE trace $FW/proto-\$t.elf --target \$t $HARNESS -n 10 -q -o \$t.trace >out &&
        grep -q '^result: *codeplace_result = $ref10 ' out || { cat out; return 1; }
    done
"

test_expect_success 'virtual board, free run: the same result after 10 marks' "
    $CODEPLACE trace $FW/proto-rp2040.elf --target rp2040 --mark codeplace_mark -n 10 \
        --result codeplace_result -q -o free.trace >out &&
    grep -q '^result: *codeplace_result = $ref10 ' out
"

test_expect_success 'proto-rp2040: over 30 KiB of code per warm iteration (codeplace sim)' "
    $CODEPLACE trace $FW/proto-rp2040.elf --target rp2040 $HARNESS -n 4 -q -o p.trace >/dev/null &&
    $CODEPLACE sim p.trace --elf $FW/proto-rp2040.elf --map $FW/proto-rp2040.map \
        --json -q -o sim.json &&
    python3 -c 'import json,sys
d = json.load(open(\"sim.json\"))
w = d[\"warm\"]
fp = w[\"sum\"][\"footprint_bytes\"] / w[\"iterations\"]
print(\"footprint\", fp)
sys.exit(0 if fp > 30 * 1024 else 1)'
"

test_expect_success 'relink WORKLOAD=proto with a plan keeps the result' "
    mkdir -p plan &&
    printf '*(.text.chacha20_block)\n*(.text.aes128_encrypt)\n' >plan/codeplace_ram.ld &&
    make --no-print-directory -s -C $CP_ROOT -f mk/firmware.mk relink WORKLOAD=proto \
        TARGET=rp2040 PLACE=\$PWD/plan OUT=\$PWD/placed >log 2>&1 &&
    arm-none-eabi-nm placed.elf >syms &&
    grep -q '^200[0-9a-f]* T chacha20_block\$' syms &&
    grep -q '^200[0-9a-f]* T aes128_encrypt\$' syms &&
    $CODEPLACE trace placed.elf --target rp2040 $HARNESS -n 10 -q -o p.trace >out &&
    grep -q '^result: *codeplace_result = $ref10 ' out
"

test_expect_success 'relink: the usage names the three workloads' "
    mkdir -p plan &&
    test_must_fail make --no-print-directory -s -C $CP_ROOT -f mk/firmware.mk relink \
        WORKLOAD=nope TARGET=rp2040 PLACE=\$PWD/plan OUT=\$PWD/x 2>err &&
    grep -q \"unknown WORKLOAD 'nope' (demo, heavy or proto)\" err
"

test_done
