# The on-target profiler core (firmware/profiler/, C99) and the Zephyr /
# pico-sdk integration.
#   build/san/tests/t-profiler   host unit test of the core (links zlib for
#                                an independent CRC-32)
#   build/firmware/profiler/*.o  the core cross-compiled for cortex-m0plus and
#                                cortex-m7 with -Wall -Wextra -Werror, as
#                                plain, ITCM-placed and RAM-placed objects
PROF_SRC   := firmware/profiler/cpprof.c
PROF_HDR   := firmware/profiler/cpprof.h
PROF_OUT   := build/firmware/profiler
PROF_XCC   := arm-none-eabi-gcc
PROF_XWARN := -std=c99 -pedantic -Wall -Wextra -Werror -Os -ffunction-sections
PROF_M0    := -mcpu=cortex-m0plus -mthumb
PROF_M7    := -mcpu=cortex-m7 -mthumb -mfpu=fpv5-d16 -mfloat-abi=hard
PROF_OBJS  := $(PROF_OUT)/m0.o $(PROF_OUT)/m0-ramfunc.o \
              $(PROF_OUT)/m7.o $(PROF_OUT)/m7-itcm.o

build/san/tests/t-profiler: tests/unit/t-profiler.c tests/unit/test.h $(PROF_SRC) $(PROF_HDR) build/san/libcodeplace.a
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -O1 -Itests/unit -Ifirmware/profiler -o $@ $< $(PROF_SRC) build/san/libcodeplace.a $(LIBS) -lz

$(PROF_OUT)/m0.o: $(PROF_SRC) $(PROF_HDR)
	@mkdir -p $(dir $@)
	$(PROF_XCC) $(PROF_M0) $(PROF_XWARN) -c -o $@ $<
$(PROF_OUT)/m0-ramfunc.o: $(PROF_SRC) $(PROF_HDR)
	@mkdir -p $(dir $@)
	$(PROF_XCC) $(PROF_M0) $(PROF_XWARN) -DCPPROF_IN_RAMFUNC -c -o $@ $<
$(PROF_OUT)/m7.o: $(PROF_SRC) $(PROF_HDR)
	@mkdir -p $(dir $@)
	$(PROF_XCC) $(PROF_M7) $(PROF_XWARN) -c -o $@ $<
$(PROF_OUT)/m7-itcm.o: $(PROF_SRC) $(PROF_HDR)
	@mkdir -p $(dir $@)
	$(PROF_XCC) $(PROF_M7) $(PROF_XWARN) -DCPPROF_IN_ITCM -c -o $@ $<

# Host helper that prints a dump made by the core (tests/cli/t7110).
$(PROF_OUT)/dumpgen: tests/zephyr/dumpgen.c $(PROF_SRC) $(PROF_HDR)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) $(SAN) -O1 -Ifirmware/profiler -o $@ $< $(PROF_SRC)

.PHONY: firmware-profiler
firmware-profiler: $(PROF_OBJS) $(PROF_OUT)/dumpgen

CHECK_DEPS += firmware-profiler
