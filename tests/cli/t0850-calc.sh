#!/bin/sh
# codeplace calc: clock scaling, miss cost, bus utilisation, energy per bit.
. "$(dirname "$0")/lib.sh"

test_expect_success 'calc clock: an exact fit recovers a and b' '
    # t = 1 ms + 2 ms * 125/f
    $CODEPLACE calc clock 125M:3ms 62.5M:5ms 250M:2ms >out &&
    cat >want <<-\EOF &&
	fit t = a + b * f0/f, f0 = 250 MHz (r^2 = 1.0000)
	a (does not scale):  0.001 s
	b (scales at f0):    0.001 s
	share that scales with the clock at f0: 50.0%

	      clock_hz         time_s          fit_s
	      1.25e+08          0.003          0.003
	       6.25e+07          0.005          0.005
	       2.5e+08          0.002          0.002
	EOF
    sed "s/^ *//" want >w && sed "s/^ *//" out >o && test_cmp w o &&
    $CODEPLACE calc clock 125M:3ms 62.5M:5ms --f0 125M --json >j &&
    python3 -c "import json,sys; d=json.load(open(\"j\")); assert abs(d[\"fixed_s\"]-0.001)<1e-12 and abs(d[\"scaling_s\"]-0.002)<1e-12 and abs(d[\"scaling_share\"]-2/3)<1e-6, d"
'

test_expect_success 'calc miss-cost: cycles per miss' '
    # 1337 fewer misses save 1.337 ms at 125 MHz: 125 cycles per miss
    $CODEPLACE calc miss-cost --clock 125M 3.1ms:2277 1.763ms:940 >out &&
    head -1 out >first && echo "cycles per miss: 125.0 (1000.0 ns at 125 MHz)" >want &&
    test_cmp want first
'

test_expect_success 'calc bus and calc energy' '
    $CODEPLACE calc bus --bits 2.5M --clock 62.5M --width 4 --time 100ms >out &&
    echo "bus utilisation: 10.0% (2.5e+06 of 2.5e+07 bits; 25.000 Mbit/s of 250.000)" >want &&
    test_cmp want out &&
    $CODEPLACE calc bus --bits 2.5M --clock 62.5M --width 4 --ddr --time 100ms --json | grep -q "\"utilisation\": 0.05" &&
    $CODEPLACE calc energy --mw 95 --mbps 9.5 >out &&
    echo "energy: 10 nJ/bit (1e+04 pJ/bit, 81.92 uJ per KiB)" >want &&
    test_cmp want out
'

test_expect_success 'calc: bad input' '
    test_exit 2 $CODEPLACE calc 2>err &&
    test_exit 2 $CODEPLACE calc nosuch 2>err && grep -q "not a calc subcommand" err &&
    test_exit 2 $CODEPLACE calc clock 125M:3ms 2>err &&
    test_exit 2 $CODEPLACE calc clock 125M-3ms 1M:2ms 2>err && grep -q "is not FREQ:TIME" err &&
    test_exit 2 $CODEPLACE calc clock 12Q:3ms 1M:2ms 2>err && grep -q "is not a number" err &&
    test_exit 1 $CODEPLACE calc clock 125M:3ms 125M:4ms 2>err && grep -q "two different clocks" err &&
    test_exit 1 $CODEPLACE calc miss-cost --clock 1M 1ms:5 2ms:5 2>err &&
    test_exit 2 $CODEPLACE calc energy --mw 5 2>err &&
    $CODEPLACE help calc | grep -q "^  miss-cost" &&
    $CODEPLACE calc help energy | grep -q "usage: codeplace calc energy"
'

test_done
