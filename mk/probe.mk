# Probe test firmware (tests/fixtures/probe/): two loops with a known time
# split, for QEMU's microbit (Cortex-M0) and mps2-an500 (Cortex-M7):
#   arm-none-eabi-gcc -mcpu=CPU -mthumb -O1 -nostdlib -T fw.ld fw.c loops.S
PROBE_FX   := build/fixtures/probe
PROBE_SRC  := tests/fixtures/probe/fw.c tests/fixtures/probe/loops.S
PROBE_XFL  := -mthumb -O1 -g -std=c99 -Wall -Wextra -Werror -nostdlib \
	-ffreestanding -T tests/fixtures/probe/fw.ld

.PHONY: probe-fixtures
probe-fixtures: $(PROBE_FX)/fw-m0.elf $(PROBE_FX)/fw-m7.elf
fixtures: probe-fixtures
CHECK_DEPS += probe-fixtures

$(PROBE_FX)/fw-m0.elf: $(PROBE_SRC) tests/fixtures/probe/fw.ld mk/probe.mk
	@mkdir -p $(PROBE_FX)
	arm-none-eabi-gcc -mcpu=cortex-m0plus $(PROBE_XFL) -Wl,-Map=$(@:.elf=.map) -o $@ $(PROBE_SRC)

$(PROBE_FX)/fw-m7.elf: $(PROBE_SRC) tests/fixtures/probe/fw.ld mk/probe.mk
	@mkdir -p $(PROBE_FX)
	arm-none-eabi-gcc -mcpu=cortex-m7 $(PROBE_XFL) -Wl,-Map=$(@:.elf=.map) -o $@ $(PROBE_SRC)
