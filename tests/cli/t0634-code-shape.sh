#!/bin/sh
# The sources keep their shape (scripts/code-shape): no command file in
# src/cmd/ over 800 lines, no function in src/ over 150 lines (the
# checker's ALLOWED list of exceptions is empty).
. "$(dirname "$0")/lib.sh"

test_expect_success 'src/ has no long command file and no long function' '
    python3 $CP_ROOT/scripts/code-shape $CP_ROOT/src >out ||
    { cat out; false; } &&
    test_cmp /dev/null out
'

# A tree with one of each breach, and near misses that must pass: a
# function of exactly 150 lines, braces in strings, character constants,
# comments and macros, an initialiser at depth 0.
test_expect_success 'the checker names the file, the function and its length' '
    mkdir -p s/cmd s/lib &&
    { echo "int f150(void)"; echo "{"; i=0;
      while [ $i -lt 147 ]; do echo "    (void)0;"; i=$((i + 1)); done;
      echo "}"; } >s/lib/ok.c &&
    { echo "/* { not a brace */"; echo "#define OPEN {";
      echo "static const int t[] = {"; echo "    1, 2 };";
      echo "static int";
      echo "g151(int a,"; echo "     int b)"; echo "{";
      echo "    const char *s = \"}}\"; char c = '"'"'{'"'"';";
      i=0; while [ $i -lt 145 ]; do echo "    (void)0;"; i=$((i + 1)); done;
      echo "}"; } >s/lib/long.c &&
    i=0; while [ $i -lt 801 ]; do echo; i=$((i + 1)); done >s/cmd/big.c &&
    i=0; while [ $i -lt 800 ]; do echo; i=$((i + 1)); done >s/cmd/fits.c &&
    test_exit 1 python3 $CP_ROOT/scripts/code-shape s >out &&
    cat >expect <<-\EOF2 &&
	s/cmd/big.c: 801 lines (limit 800 for a command file)
	s/lib/long.c:5: g151: 151 lines (limit 150)
	EOF2
    test_cmp expect out
'

test_done
