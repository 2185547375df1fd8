#!/bin/sh
# codeplace bench usbmon: captures written by build/tests/mkusbcap with
# libpcap's pcap_dump (tests/bench/usbcap.h has the exact timings: bus 50 us,
# device 400/410/420 us, host 200 us), in both link types, both byte orders,
# CDC-ECM and CDC-NCM, UDP and ICMP, and the usbmon text format.
. "$(dirname "$0")/lib.sh"
MK=$CP_ROOT/build/tests/mkusbcap

test_expect_success 'ECM, DLT 220: golden text' '
    $MK cap.pcap --n 6 >answered && echo 6 >want && test_cmp want answered &&
    $CODEPLACE bench usbmon cap.pcap >out &&
    cat >want <<-\EOF &&
	capture:   cap.pcap (pcap, DLT_USB_LINUX_MMAPPED (220))
	transfers: 6 bulk OUT, 6 bulk IN; frames 6 out, 6 in (CDC-ECM)
	echoes:    6 paired by payload, 0 requests unanswered

	part            n  median_us     p10_us     p90_us     max_us   share
	device          6      410.0      400.0      420.0      420.0   62.1%
	bus             6       50.0       50.0       50.0       50.0    7.6%
	host            5      200.0      200.0      200.0      200.0   30.3%

	device: OUT transfer done -> reply IN transfer done
	bus:    OUT transfer submitted -> done
	host:   reply IN done -> next OUT submitted (one echo at a time)
	EOF
    test_cmp want out
'

# args | echoes unanswered class pairing format-prefix host_n
while IFS='|' read args want; do
test_expect_success "mkusbcap $args" "
    \$MK cap $args >/dev/null &&
    \$CODEPLACE bench usbmon cap --json >j &&
    python3 - j <<-\PY >got &&
	import json, sys
	d = json.load(open(sys.argv[1]))
	assert d['bus']['median_us'] == 50 and d['bus']['max_us'] == 50, d
	assert d['host']['n'] == 0 or d['host']['median_us'] == 200, d
	print(d['echoes'], d['unanswered'], d['class'], d['pairing'], d['format'].split(',')[0], d['host']['n'], d['device']['median_us'])
	PY
    echo '$want' >want && test_cmp want got
"
done <<'EOF'
--n 20 --dlt 189|20 0 ecm payload pcap 19 410
--n 20 --swap|20 0 ecm payload pcap 19 410
--n 20 --dlt 189 --swap --ncm|20 0 ncm payload pcap 14 410
--n 20 --icmp --lose 4|15 5 ecm payload pcap 14 410
--n 20 --ncm --lose 3|14 6 ncm payload pcap 11 405
--n 20 --text|20 0 ecm fifo usbmon text 19 410
EOF

test_expect_success '--port keeps only UDP echoes on that port' '
    $MK cap --n 10 >/dev/null &&
    $CODEPLACE bench usbmon cap --port 7 --json | grep -q "\"echoes\": 10" &&
    $CODEPLACE bench usbmon cap --port 9 --json | grep -q "\"echoes\": 0" &&
    $MK icmp --n 10 --icmp >/dev/null &&
    $CODEPLACE bench usbmon icmp --port 7 --json | grep -q "\"echoes\": 0"
'

test_expect_success '--device and --bus select the device' '
    $MK cap --n 10 >/dev/null &&
    $CODEPLACE bench usbmon cap --bus 1 --device 5 --json | grep -q "\"echoes\": 10" &&
    $CODEPLACE bench usbmon cap --device 6 --json | grep -q "\"echoes\": 0"
'

test_expect_success 'CSV: one row per echo with the three times' '
    $MK cap --n 4 >/dev/null &&
    $CODEPLACE bench usbmon cap --csv >out &&
    cat >want <<-\EOF &&
	echo,out_submit_ns,out_done_ns,in_done_ns,device_us,bus_us,host_us
	0,1700000000000000000,1700000000000050000,1700000000000450000,400.000,50.000,200.000
	1,1700000000000650000,1700000000000700000,1700000000001110000,410.000,50.000,200.000
	2,1700000000001310000,1700000000001360000,1700000000001780000,420.000,50.000,200.000
	3,1700000000001980000,1700000000002030000,1700000000002430000,400.000,50.000,
	EOF
    test_cmp want out
'

test_expect_success 'bad input: a clear error, exit 1' '
    test_exit 1 $CODEPLACE bench usbmon nosuch.pcap 2>err &&
    grep -q "cannot open .nosuch.pcap." err &&
    printf "hello\nworld\n" >bad.txt &&
    test_exit 1 $CODEPLACE bench usbmon bad.txt 2>err &&
    grep -q "bad.txt.: line 1: not a usbmon text event" err &&
    $MK cap --n 3 >/dev/null && head -c 100 cap >trunc &&
    test_must_fail $CODEPLACE bench usbmon trunc 2>err && cat err &&
    test_exit 2 $CODEPLACE bench usbmon 2>err &&
    test_exit 2 $CODEPLACE bench usbmon a b 2>err &&
    test_exit 2 $CODEPLACE bench usbmon cap --mode xyz 2>err
'

test_expect_success '--live on an interface that is not there fails cleanly' '
    test_exit 1 $CODEPLACE bench usbmon --live usbmon99 --duration 1 2>err &&
    grep -q "usbmon99" err
'

test_done
