# ThreadSanitizer build: plan --threads runs its annealing chains in
# pthreads (src/plan/chains.c); tests/cli/t0628-plan-tsan.sh runs the
# planner's threads under this binary and fails on any report.
#   build/tsan/codeplace   -fsanitize=thread, -O1, the whole program
TSAN := -fsanitize=thread -fno-omit-frame-pointer
TSAN_OBJ := $(LIB_SRC:src/%.c=build/tsan/%.o) $(CMD_SRC:src/%.c=build/tsan/%.o)

build/tsan/codeplace: $(TSAN_OBJ)
	$(CC) $(ALL_CFLAGS) $(TSAN) -o $@ $^ $(LIBS)

build/tsan/%.o: src/%.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(TSAN) -O1 -MMD -MP -c -o $@ $<

CHECK_DEPS += build/tsan/codeplace

-include $(TSAN_OBJ:.o=.d)
