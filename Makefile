# codeplace: a plain Makefile.
#   make            build build/codeplace
#   make check      run the whole test suite under ASan/UBSan
#   make demo       the main job on the built-in virtual board
#   make bench      the speed figures (docs/BENCHMARKS.md)
#   make fuzz       run the parsers' fuzzers (FUZZ_SECONDS each)
#   make install PREFIX=/usr/local

CC      ?= cc
PREFIX  ?= /usr/local
VERSION := 0.1.0

WARN    := -Wall -Wextra -Werror -Wmissing-prototypes -Wshadow
CFLAGS  ?= -O2 -g
ALL_CFLAGS := -std=c11 -D_GNU_SOURCE $(WARN) -Isrc -DCODEPLACE_VERSION=\"$(VERSION)\" -DCODEPLACE_DATADIR=\"$(PREFIX)/share/codeplace\" $(CFLAGS)
LIBS    := -lunicorn -lelf -lpcap -lpthread -lm -lstdc++

SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined

# Every library module lives in a folder under src/; the commands are
# src/cmd/*.c, their table src/main.c.
LIB_SRC := $(filter-out src/qplugin/plugin.c src/cmd/%,$(sort $(wildcard src/*/*.c)))
CMD_SRC := $(sort $(wildcard src/cmd/*.c)) src/main.c
LIB_OBJ := $(LIB_SRC:src/%.c=build/obj/%.o)
CMD_OBJ := $(CMD_SRC:src/%.c=build/obj/%.o)
LIB_SOBJ := $(LIB_SRC:src/%.c=build/san/%.o)
CMD_SOBJ := $(CMD_SRC:src/%.c=build/san/%.o)

UNIT_SRC := $(sort $(wildcard tests/unit/t-*.c))
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=build/san/tests/%)

.PHONY: all check demo bench fuzz install clean setup headers unit fixtures plugin test-deps

all: build/codeplace build/codeplace-qemu.so

# The QEMU TCG plugin recorder (docs/trace.md "QEMU plugin"): position-
# independent objects of the plugin and of the trace writer it links in.
PLUGIN_SRC := src/qplugin/plugin.c src/qplugin/thumb.c src/isa/thumb.c \
	src/trace/trace.c src/util/util.c
PLUGIN_OBJ := $(PLUGIN_SRC:src/%.c=build/pic/%.o)

plugin: build/codeplace-qemu.so

build/codeplace-qemu.so: $(PLUGIN_OBJ)
	$(CC) $(ALL_CFLAGS) -shared -fPIC -o $@ $^ -lpthread

build/pic/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -fvisibility=hidden -MMD -MP -c -o $@ $<

setup:
	@sh scripts/setup

build/codeplace: $(LIB_OBJ) $(CMD_OBJ)
	$(CC) $(ALL_CFLAGS) -o $@ $^ $(LIBS)

build/libcodeplace.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/obj/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

# Sanitizer build used by the tests.
build/san/codeplace: $(LIB_SOBJ) $(CMD_SOBJ)
	$(CC) $(ALL_CFLAGS) $(SAN) -o $@ $^ $(LIBS)

build/san/libcodeplace.a: $(LIB_SOBJ)
	@rm -f $@
	ar rcs $@ $^

build/san/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -O1 -MMD -MP -c -o $@ $<

build/san/tests/t-%: tests/unit/t-%.c tests/unit/test.h build/san/libcodeplace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -O1 -Itests/unit -o $@ $< build/san/libcodeplace.a $(LIBS)

# Each header compiles on its own.
headers:
	@for h in $(wildcard src/*/*.h src/*.h); do \
		echo "#include \"$${h#src/}\"" | $(CC) $(ALL_CFLAGS) -x c -fsyntax-only - || exit 1; \
	done

unit: $(UNIT_BIN)

fixtures:
	@$(MAKE) --no-print-directory -f tests/fixtures/fixtures.mk

# make check builds on every core unless told otherwise (make check JOBS=1).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
check: setup
	@$(MAKE) --no-print-directory headers
	@$(MAKE) --no-print-directory -j$(JOBS) test-deps
	@CP_TEST_JOBS=$(JOBS) sh tests/run

demo: setup build/codeplace
	@sh scripts/demo

bench: setup build/codeplace
	@sh scripts/bench

fuzz: setup fixtures
	@sh tests/fuzz/run

install: build/codeplace build/codeplace-qemu.so
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/codeplace
	install -m 755 build/codeplace $(DESTDIR)$(PREFIX)/bin/codeplace
	install -d $(DESTDIR)$(PREFIX)/share/codeplace/targets
	install -m 644 targets/*.target $(DESTDIR)$(PREFIX)/share/codeplace/targets/
	install -m 755 build/codeplace-qemu.so $(DESTDIR)$(PREFIX)/lib/codeplace/codeplace-qemu.so

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CMD_OBJ:.o=.d) $(LIB_SOBJ:.o=.d) $(CMD_SOBJ:.o=.d) \
	$(PLUGIN_OBJ:.o=.d)

# Fragments under mk/ add their own targets (firmware, cross-compile checks).
# A fragment appends to CHECK_DEPS what `make check` must build first.
-include $(sort $(wildcard mk/*.mk))

# Everything the tests need, without running them (then: sh tests/run PATTERN).
test-deps: build/san/codeplace build/codeplace build/codeplace-qemu.so unit fixtures $(CHECK_DEPS)
