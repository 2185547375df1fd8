#!/bin/sh
# codeplace bench compare: interleaved runs with bootstrap intervals, and
# earlier sweep results per image with a bar chart.
. "$(dirname "$0")/lib.sh"

# A configuration: a shell command that counts its runs in NAME.n, logs its
# name, and prints BASE + run % 3.
cfg() {
    echo "n=\$(cat $1.n 2>/dev/null || echo 0); echo \$((n+1)) >$1.n; echo $1 >>order.log; echo \"rate: \$(($2 + n % 3))\""
}

test_expect_success 'runs interleave A B C A B C, each N times' '
    $CODEPLACE bench compare --times 4 --run "A=$(cfg A 100)" --run "B=$(cfg B 200)" \
        --run "C=$(cfg C 100)" -q >out &&
    tr "\n" " " <order.log >order && printf "A B C A B C A B C A B C " >want &&
    test_cmp want order &&
    cat out &&
    grep -q "^B - A: +100 (+99.5%), 95% CI \[98.5, 101.5\]: higher$" out &&
    grep -q "^C - A: +0 (+0.0%), 95% CI \[-1.5, 1.5\]: inside the noise$" out
'

test_expect_success 'JSON: values in run order, medians and intervals' '
    $CODEPLACE bench compare --times 5 --run "A=$(cfg A 100)" --run "B=$(cfg A 100)" \
        --json -q >c.json &&
    python3 - c.json <<-\PY
	import json, sys
	d = json.load(open(sys.argv[1]))
	a, b = d["configs"]
	assert a["values"] == [100, 102, 101, 100, 102], a   # A and B share A.n
	assert b["values"] == [101, 100, 102, 101, 100], b
	assert a["median"] == 101 and b["median"] == 101
	assert b["inside_noise"] is True
	PY
'

test_expect_success '--metric takes the last "KEY": NUMBER' '
    $CODEPLACE bench compare --times 2 --metric peak \
        --run "A=echo \"{\\\"peak\\\": 5, \\\"peak\\\": 7}\"" --json -q >c.json &&
    grep -q "\"median\": 7" c.json
'

test_expect_success 'a failing configuration stops with exit 1' '
    test_exit 1 $CODEPLACE bench compare --times 2 --run "A=exit 3" -q 2>err &&
    grep -q "failed" err &&
    test_exit 1 $CODEPLACE bench compare --times 1 --run "A=echo none" -q 2>err &&
    grep -q "printed no number" err &&
    test_exit 2 $CODEPLACE bench compare 2>err &&
    test_exit 2 $CODEPLACE bench compare --run noequals 2>err
'

test_expect_success 'sweep files: per image peak and all-answered, mean +- SD, bar chart' '
    cat >s1.csv <<-\EOF &&
	# codeplace sweep 1
	# label: stock
	pass,step,rate,requested,sent,skipped,sent_late,send_errors,answered,lost,late,duplicated,reordered,stray,achieved_rate,reply_rate
	1,0,100,100,100,0,0,0,100,0,0,0,0,0,100,100
	1,1,200,200,200,0,0,0,200,0,0,0,0,0,200,200
	1,2,400,400,400,0,0,0,300,100,0,0,0,0,400,300
	EOF
    cat >s2.csv <<-\EOF &&
	# codeplace sweep 1
	# label: stock
	pass,step,rate,requested,sent,skipped,sent_late,send_errors,answered,lost,late,duplicated,reordered,stray,achieved_rate,reply_rate
	1,0,250,250,250,0,0,0,250,0,0,0,0,0,250,250
	1,1,400,400,400,0,0,0,320,80,0,0,0,0,400,320
	EOF
    cat >p.csv <<-\EOF &&
	# codeplace sweep 1
	# label: placed
	pass,step,rate,requested,sent,skipped,sent_late,send_errors,answered,lost,late,duplicated,reordered,stray,achieved_rate,reply_rate
	1,0,800,800,800,0,0,0,800,0,0,0,0,0,800,800
	1,1,1000,1000,1000,0,0,0,900,100,0,0,0,0,1000,900
	2,0,800,800,800,0,0,0,800,0,0,0,0,0,800,800
	2,1,1000,1000,1000,0,0,0,940,60,0,0,0,0,1000,940
	EOF
    $CODEPLACE bench compare s1.csv s2.csv p.csv --svg bars.svg --csv >out &&
    cat >want <<-\EOF &&
	name,n,median,ci_lo,ci_hi,mean,sd,diff_median,diff_lo,diff_hi,inside_noise
	stock,2,310.000,300.000,320.000,310.000,14.142,,,,
	placed,2,920.000,900.000,940.000,920.000,28.284,610.000,580.000,640.000,no
	EOF
    test_cmp want out &&
    $CODEPLACE bench compare s1.csv s2.csv p.csv >out &&
    grep -q "^stock .* 225 +- 35$" out &&
    test $(grep -o "class=\"bar\"" bars.svg | wc -l) = 2 &&
    test $(grep -o "class=\"errbar\"" bars.svg | wc -l) = 2 &&
    grep -q "<title>placed: 920</title>" bars.svg
'

test_expect_success 'an SVG that cannot be written whole: error, exit 1, the old file kept' '
    for l in stock placed; do
        printf "# codeplace sweep 1\n# label: $l\npass,step,rate,requested,sent,skipped,sent_late,send_errors,answered,lost,late,duplicated,reordered,stray,achieved_rate,reply_rate\n1,0,100,100,100,0,0,0,100,0,0,0,0,0,100,100\n" >$l.csv || return 1
    done &&
    echo old >bars2.svg &&
    (ulimit -f 1; test_exit 1 $CODEPLACE bench compare stock.csv placed.csv \
        --svg bars2.svg >/dev/null 2>err) &&
    grep -q "bars2.svg" err && test "$(cat bars2.svg)" = old &&
    test -z "$(ls | grep "\.tmp\.")" &&
    test_exit 1 $CODEPLACE bench compare stock.csv placed.csv --svg nodir/b.svg 2>err &&
    grep -q "nodir/b.svg" err
'

test_expect_success 'a file that is not a sweep: exit 1 naming it' '
    echo "a,b" >x.csv && echo "1,2" >>x.csv &&
    test_exit 1 $CODEPLACE bench compare x.csv 2>err &&
    grep -q "x.csv.*not a bench udp CSV (no column .pass.)" err
'

test_done
