#!/bin/sh
# codeplace report --html: the page loads in headless Chromium without
# errors or network requests, and shows the headings, plots and tables.
. "$(dirname "$0")/lib.sh"
FX=$CP_FIXTURES

# Headless Chromium, offline: a fresh profile, no background traffic.
chrome() {
    dir=$(mktemp -d "$TEST_TMP/chrome.XXXXXX")
    timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic \
        --no-first-run --disable-background-networking \
        --disable-component-update --disable-sync --user-data-dir="$dir" \
        --enable-logging=stderr --v=0 "$@"
}

mk_page() {
    cat >s.txt <<-\EOF
	# codeplace samples 1
	# source: probe-pcsr
	# rate_hz: 1000
	0x10000804 300
	0x1000104c 500
	0x10000124 100
	0x1000014c 80
	0xffffffff 20
	EOF
    $CODEPLACE report s.txt --elf "$FX/m0.elf" --map "$FX/m0.map" \
        --html page.html -q >/dev/null
}

if ! have chromium; then
    test_skip 'HTML page in Chromium' 'chromium not installed (scripts/setup)'
    test_done
    exit
fi

test_expect_success 'the page is self-contained' '
    mk_page &&
    grep -q "<th>rate</th><td>1 kHz</td>" page.html &&
    ! grep -E -i "(src|href)=\"(https?:)?//" page.html &&
    ! grep -i "<script" page.html &&
    grep -q "Content-Security-Policy\" content=\"default-src .none.;" page.html
'

# One Chromium run (it is slow to start) gives the DOM, the log and a
# screenshot; the tests after it look at them. Chromium exits 0 on a file
# it cannot load too (an empty DOM): the page loaded when the DOM it
# dumps has the page's title and as many table rows and plots.
test_expect_success 'Chromium loads the page' '
    mk_page &&
    chrome --window-size=1200,1600 --screenshot="$PWD/shot.png" --dump-dom \
        "file://$PWD/page.html" >dom.html 2>chrome.log &&
    grep -o "<title>codeplace report: [^<]*</title>" page.html >want &&
    test $(wc -l <want) = 1 &&
    grep -o "<title>codeplace report: [^<]*</title>" dom.html >got &&
    test_cmp want got &&
    test $(grep -o "<tr" dom.html | wc -l) = $(grep -o "<tr" page.html | wc -l) &&
    test $(grep -o "<svg" dom.html | wc -l) = $(grep -o "<svg" page.html | wc -l) &&
    test -s shot.png &&
    mkdir -p "$TEST_TMP/shared" &&
    cp dom.html chrome.log shot.png "$TEST_TMP/shared/"
'

test_expect_success 'the DOM has the headings, plots and tables' '
    cd "$TEST_TMP/shared" &&
    python3 - <<-\EOF
	import re, sys
	from html.parser import HTMLParser
	class P(HTMLParser):
	    def __init__(self):
	        super().__init__(); self.tags = []; self.stack = []; self.text = {}
	        self.bars = 0; self.rows = 0
	    def handle_starttag(self, t, a):
	        a = dict(a); self.stack.append(t)
	        if t == "rect" and a.get("class") == "bar": self.bars += 1
	        if t == "tr": self.rows += 1
	        self.tags.append(t)
	    def handle_endtag(self, t):
	        if self.stack: self.stack.pop()
	    def handle_data(self, d):
	        if self.stack and self.stack[-1] in ("h1", "h2"):
	            self.text.setdefault(self.stack[-1], []).append(d.strip())
	p = P(); p.feed(open("dom.html").read())
	assert p.text.get("h1") == ["codeplace report"], p.text
	assert p.text.get("h2") == ["Summary", "Where the time goes", "Functions",
	                            "Libraries", "Sections"], p.text
	assert p.tags.count("svg") == 2, p.tags.count("svg")
	# libc.a, (objects), libgcc.a, (halted) + the 5 rows of the top chart
	assert p.bars == 4 + 5, p.bars
	assert p.rows >= 20, p.rows
	EOF
'

test_expect_success 'no console errors, no blocked loads' '
    cd "$TEST_TMP/shared" &&
    test -s chrome.log &&
    ! grep -E "CONSOLE|Refused to|Uncaught|net::ERR" chrome.log
'

test_expect_success 'a screenshot was taken (PNG of the asked size)' '
    cd "$TEST_TMP/shared" &&
    python3 - <<-\EOF
	import struct
	d = open("shot.png", "rb").read()
	assert d[:8] == b"\x89PNG\r\n\x1a\n"
	w, h = struct.unpack(">II", d[16:24])
	assert (w, h) == (1200, 1600), (w, h)
	assert len(d) > 20000, len(d)   # more than a blank page
	EOF
'

test_done
