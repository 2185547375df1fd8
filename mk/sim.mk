# The cache simulator's test helper and benchmark.
#   build/san/tests/mktrace   writes trace files from text (tests/cli/t0400-sim.sh)
#   build/bench/sim-bench     the model speed figures (bench/sim.sh)
#   build/bench/line-place    layout with functions cut into lines: how far
#                             placement alone could go (docs/BENCHMARKS.md)
build/san/tests/mktrace: tests/tools/mktrace.c build/san/libcodeplace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -O1 -o $@ $< build/san/libcodeplace.a $(LIBS)

build/bench/sim-bench: bench/sim-bench.c build/libcodeplace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O3 -o $@ $< build/libcodeplace.a $(LIBS)

build/bench/line-place: bench/line-place.c build/libcodeplace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -O2 -o $@ $< build/libcodeplace.a $(LIBS)

CHECK_DEPS += build/san/tests/mktrace
