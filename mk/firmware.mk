# codeplace demo firmware (firmware/, docs/firmware.md), built with Debian's
# arm-none-eabi-gcc and picolibc. Outputs in build/fw/:
#   demo-rp2040.elf/.map       cortex-m0plus, soft float: the RP2040 virtual board
#   demo-imxrt1062.elf/.map    cortex-m7, soft float: i.MX RT1062 (double math
#                              in library code, as on the M0+, so that the
#                              code per iteration exercises the 32 KiB I-cache)
#   demo-microbit.elf/.map     QEMU reference (machine microbit, Cortex-M0),
#                              the same object code as demo-rp2040
#   demo-mps2-an500.elf/.map   QEMU reference (machine mps2-an500, Cortex-M7),
#                              the same object code as demo-imxrt1062
#   heavy-BOARD.elf/.map       the heavy workload (firmware/heavy/, C++17 on
#                              newlib + libstdc++ + libgcc) for rp2040 and
#                              imxrt1062, with QEMU references mps2-an385
#                              (Cortex-M3 running the rp2040 object code) and
#                              mps2-an500
#   proto-BOARD.elf/.map       the protocol workload (firmware/proto/, C99 on
#                              picolibc: frames, ChaCha20-Poly1305, HMAC,
#                              printf-style logging) for rp2040 and
#                              imxrt1062, with the QEMU references
#                              mps2-an385 (the rp2040 object code) and
#                              mps2-an500 (the imxrt1062 one)
#   host/proto-host            the same sources built for this machine
#   host/proto-vectors         its cryptography against the RFC test vectors
#
#   ws-mps2-an385.elf/.map     whole-system echo firmware (firmware/ws/):
#   ws-mps2-an500.elf/.map     kernel, LAN9118 driver, ARP/IPv4/ICMP/UDP
#                              echo; QEMU mps2-an385 (Cortex-M3) and
#                              mps2-an500 (Cortex-M7, soft float)
#
#   make firmware
#   make -f mk/firmware.mk relink TARGET=rp2040 PLACE=plan-dir OUT=build/fw/placed/demo-rp2040
#        (TARGET=ws-mps2-an385 or ws-mps2-an500 for the echo firmware)
#        (or firmware/relink.sh rp2040 plan-dir build/fw/placed/demo-rp2040)
#   make -f mk/firmware.mk relink WORKLOAD=heavy TARGET=rp2040 PLACE=plan-dir OUT=...
#   make -f mk/firmware.mk relink WORKLOAD=proto TARGET=rp2040 PLACE=plan-dir OUT=...
FW_OUT   := build/fw
FW_CC    := arm-none-eabi-gcc
FW_CFLAGS := -std=c99 -Os -g -Wall -Wextra -Werror \
	-ffunction-sections -fdata-sections --specs=picolibc.specs \
	-Ifirmware/common -Ifirmware/demo
FW_CPU_m0 := -mcpu=cortex-m0plus -mthumb
FW_CPU_m7 := -mcpu=cortex-m7 -mthumb -mfloat-abi=soft
FW_LDFLAGS = --specs=picolibc.specs -nostartfiles -Wl,--gc-sections \
	-L$(1) -Lfirmware/ld/default -Lfirmware/ld

FW_DEMO_SRC := $(sort $(wildcard firmware/demo/*.c)) firmware/common/startup.c
FW_HDR      := $(wildcard firmware/demo/*.h firmware/common/*.h)
FW_LD       := $(wildcard firmware/ld/*.ld firmware/ld/default/*.ld)
FW_OBJ_m0   := $(FW_DEMO_SRC:firmware/%.c=$(FW_OUT)/obj/m0/%.o)
FW_OBJ_m7   := $(FW_DEMO_SRC:firmware/%.c=$(FW_OUT)/obj/m7/%.o)

# board -> cpu, extra objects, extra libraries
FW_CPUOF_rp2040     := m0
FW_CPUOF_microbit   := m0
FW_CPUOF_imxrt1062  := m7
FW_CPUOF_mps2-an500 := m7
FW_CPUOF_mps2-an385 := m0
FW_REF_microbit     := --oslib=semihost
FW_REF_mps2-an500   := --oslib=semihost
FW_EXTRA_microbit   := $(FW_OUT)/obj/m0/ref/semihost.o
FW_EXTRA_mps2-an500 := $(FW_OUT)/obj/m7/ref/semihost.o

FW_BOARDS := rp2040 imxrt1062 microbit mps2-an500
HV_BOARDS := rp2040 imxrt1062 mps2-an385 mps2-an500
FW_ELF    := $(FW_BOARDS:%=$(FW_OUT)/demo-%.elf) $(HV_BOARDS:%=$(FW_OUT)/heavy-%.elf)

.PHONY: firmware relink
firmware: $(FW_ELF)

$(FW_OUT)/obj/m0/%.o: firmware/%.c $(FW_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CPU_m0) $(FW_CFLAGS) -c -o $@ $<

$(FW_OUT)/obj/m7/%.o: firmware/%.c $(FW_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CPU_m7) $(FW_CFLAGS) -c -o $@ $<

# fw_link(board, placement dir, output prefix)
fw_link = $(FW_CC) $(FW_CPU_$(FW_CPUOF_$(1))) $(call FW_LDFLAGS,$(2)) \
	-T firmware/ld/$(1).ld -Wl,-Map=$(3).map -o $(3).elf \
	$(FW_OBJ_$(FW_CPUOF_$(1))) $(FW_EXTRA_$(1)) -lm $(FW_REF_$(1))

# Keep the objects (make would delete them as intermediate files).
.SECONDARY: $(FW_OBJ_m0) $(FW_OBJ_m7) $(FW_EXTRA_microbit) $(FW_EXTRA_mps2-an500)

define FW_BOARD_RULE
$(FW_OUT)/demo-$(1).elf: $$(FW_OBJ_$$(FW_CPUOF_$(1))) $$(FW_EXTRA_$(1)) $$(FW_LD)
	$$(call fw_link,$(1),firmware/ld/default,$(FW_OUT)/demo-$(1))
endef
$(foreach b,$(FW_BOARDS),$(eval $(call FW_BOARD_RULE,$(b))))

# The heavy workload (docs/firmware.md, "The heavy workload"): C++17 on
# Debian's newlib (libnewlib-arm-none-eabi), libstdc++
# (libstdc++-arm-none-eabi-newlib) and libgcc, no picolibc. The startup is
# the shared one, built for newlib (no picolibc TLS pointer).
HV_CXX      := arm-none-eabi-g++
HV_CXXFLAGS := -std=c++17 -Os -g -Wall -Wextra -Werror \
	-fno-exceptions -fno-rtti -fno-threadsafe-statics -fno-use-cxa-atexit \
	-ffunction-sections -fdata-sections -Ifirmware/common -Ifirmware/heavy
HV_CFLAGS   := -std=c99 -Os -g -Wall -Wextra -Werror -DCODEPLACE_NEWLIB \
	-ffunction-sections -fdata-sections -Ifirmware/common
HV_SRC      := $(sort $(wildcard firmware/heavy/*.cpp))
HV_HDR      := $(wildcard firmware/heavy/*.h firmware/common/*.h)
HV_OBJ_m0   := $(HV_SRC:firmware/%.cpp=$(FW_OUT)/hobj/m0/%.o) $(FW_OUT)/hobj/m0/common/startup.o
HV_OBJ_m7   := $(HV_SRC:firmware/%.cpp=$(FW_OUT)/hobj/m7/%.o) $(FW_OUT)/hobj/m7/common/startup.o
HV_EXTRA_mps2-an385 := $(FW_OUT)/hobj/m0/ref/heavy-semihost.o
HV_EXTRA_mps2-an500 := $(FW_OUT)/hobj/m7/ref/heavy-semihost.o

$(FW_OUT)/hobj/%/ref/heavy-semihost.o: firmware/ref/heavy-semihost.cpp $(HV_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(HV_CXX) $(FW_CPU_$*) $(HV_CXXFLAGS) -c -o $@ $<

$(FW_OUT)/hobj/%/common/startup.o: firmware/common/startup.c $(HV_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CPU_$*) $(HV_CFLAGS) -c -o $@ $<

$(FW_OUT)/hobj/m0/heavy/%.o: firmware/heavy/%.cpp $(HV_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(HV_CXX) $(FW_CPU_m0) $(HV_CXXFLAGS) -c -o $@ $<

$(FW_OUT)/hobj/m7/heavy/%.o: firmware/heavy/%.cpp $(HV_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(HV_CXX) $(FW_CPU_m7) $(HV_CXXFLAGS) -c -o $@ $<

# hv_link(board, placement dir, output prefix). libstdc++.a is built with
# exceptions: its string code refers to the unwinder, which wants the
# exception index that sections.ld discards. The workload never throws
# (firmware/heavy/rt.cpp stops the board instead), so the index is empty.
hv_link = $(HV_CXX) $(FW_CPU_$(FW_CPUOF_$(1))) -nostartfiles -Wl,--gc-sections \
	-Wl,--defsym=__exidx_start=0 -Wl,--defsym=__exidx_end=0 \
	-L$(2) -Lfirmware/ld/default -Lfirmware/ld \
	-T firmware/ld/$(1).ld -Wl,-Map=$(3).map -o $(3).elf \
	$(HV_OBJ_$(FW_CPUOF_$(1))) $(HV_EXTRA_$(1)) -lstdc++ -lm -lc -lgcc

.SECONDARY: $(HV_OBJ_m0) $(HV_OBJ_m7) $(HV_EXTRA_mps2-an385) $(HV_EXTRA_mps2-an500)

define HV_BOARD_RULE
$(FW_OUT)/heavy-$(1).elf: $$(HV_OBJ_$$(FW_CPUOF_$(1))) $$(HV_EXTRA_$(1)) $$(FW_LD)
	$$(call hv_link,$(1),firmware/ld/default,$(FW_OUT)/heavy-$(1))
endef
$(foreach b,$(HV_BOARDS),$(eval $(call HV_BOARD_RULE,$(b))))

# The protocol workload (docs/firmware.md, "The protocol workload"): C99
# on picolibc like the demo, with the demo's startup object. The
# same sources also build for the host (HOST_CC), as an independent check
# of the board's codeplace_result against another compiler and C library.
PR_CFLAGS := -std=c99 -Os -g -Wall -Wextra -Werror -Wmissing-prototypes -Wshadow \
	-ffunction-sections -fdata-sections --specs=picolibc.specs \
	-Ifirmware/common -Ifirmware/proto
PR_SRC    := $(sort $(wildcard firmware/proto/*.c))
PR_HDR    := $(wildcard firmware/proto/*.h firmware/common/*.h)
PR_OBJ_m0 := $(PR_SRC:firmware/%.c=$(FW_OUT)/pobj/m0/%.o) $(FW_OUT)/obj/m0/common/startup.o
PR_OBJ_m7 := $(PR_SRC:firmware/%.c=$(FW_OUT)/pobj/m7/%.o) $(FW_OUT)/obj/m7/common/startup.o
PR_BOARDS := rp2040 imxrt1062 mps2-an385 mps2-an500
# the QEMU references, the rp2040 object code on a Cortex-M3 and the
# imxrt1062 one on a Cortex-M7, printing their results through picolibc's
# semihosting (firmware/ref/semihost.c)
PR_EXTRA_mps2-an385 := $(FW_OUT)/obj/m0/ref/semihost.o
PR_EXTRA_mps2-an500 := $(FW_OUT)/obj/m7/ref/semihost.o
PR_REF_mps2-an385   := --oslib=semihost
PR_REF_mps2-an500   := --oslib=semihost
HOST_CC   ?= cc
PR_HOST_CFLAGS := -std=c99 -O2 -g -Wall -Wextra -Werror -Wmissing-prototypes -Wshadow \
	-Ifirmware/common -Ifirmware/proto
PR_HOST   := $(FW_OUT)/host/proto-host $(FW_OUT)/host/proto-vectors
firmware: $(PR_BOARDS:%=$(FW_OUT)/proto-%.elf) $(PR_HOST)

$(FW_OUT)/pobj/m0/proto/%.o: firmware/proto/%.c $(PR_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CPU_m0) $(PR_CFLAGS) -c -o $@ $<

$(FW_OUT)/pobj/m7/proto/%.o: firmware/proto/%.c $(PR_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(FW_CC) $(FW_CPU_m7) $(PR_CFLAGS) -c -o $@ $<

# pr_link(board, placement dir, output prefix)
pr_link = $(FW_CC) $(FW_CPU_$(FW_CPUOF_$(1))) $(call FW_LDFLAGS,$(2)) \
	-T firmware/ld/$(1).ld -Wl,-Map=$(3).map -o $(3).elf $(PR_OBJ_$(FW_CPUOF_$(1))) \
	$(PR_EXTRA_$(1)) -lm $(PR_REF_$(1))

.SECONDARY: $(PR_OBJ_m0) $(PR_OBJ_m7) $(PR_EXTRA_mps2-an385) $(PR_EXTRA_mps2-an500)

define PR_BOARD_RULE
$(FW_OUT)/proto-$(1).elf: $$(PR_OBJ_$$(FW_CPUOF_$(1))) $$(PR_EXTRA_$(1)) $$(FW_LD)
	$$(call pr_link,$(1),firmware/ld/default,$(FW_OUT)/proto-$(1))
endef
$(foreach b,$(PR_BOARDS),$(eval $(call PR_BOARD_RULE,$(b))))

$(FW_OUT)/host/proto-host: firmware/ref/proto-host.c $(PR_SRC) $(PR_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(HOST_CC) $(PR_HOST_CFLAGS) -o $@ firmware/ref/proto-host.c $(PR_SRC) -lm

$(FW_OUT)/host/proto-vectors: firmware/ref/proto-vectors.c $(PR_SRC) $(PR_HDR) mk/firmware.mk
	@mkdir -p $(dir $@)
	$(HOST_CC) $(PR_HOST_CFLAGS) -o $@ firmware/ref/proto-vectors.c \
		$(filter-out firmware/proto/proto.c,$(PR_SRC)) -lm

# Whole-system echo firmware: one set of objects per board (the LAN9118
# is at another address on each, firmware/ws/board.h).
WS_SRC    := $(sort $(wildcard firmware/ws/*.c))
WS_HDR    := $(wildcard firmware/ws/*.h)
WS_CFLAGS := -std=c99 -Os -g -Wall -Wextra -Werror -Wmissing-prototypes \
	-Wshadow -ffunction-sections -fdata-sections --specs=picolibc.specs \
	-Ifirmware/ws
WS_CPU_mps2-an385 := -mcpu=cortex-m3 -mthumb
WS_CPU_mps2-an500 := -mcpu=cortex-m7 -mthumb -mfloat-abi=soft
WS_DEF_mps2-an385 := -DWS_BOARD_AN385
WS_DEF_mps2-an500 := -DWS_BOARD_AN500
WS_BOARDS := mps2-an385 mps2-an500
WS_ELF    := $(WS_BOARDS:%=$(FW_OUT)/ws-%.elf)
firmware: $(WS_ELF)

# ws_link(board, placement dir, output prefix)
ws_link = $(FW_CC) $(WS_CPU_$(1)) $(call FW_LDFLAGS,$(2)) \
	-T firmware/ld/$(1).ld -Wl,-Map=$(3).map -o $(3).elf $(WS_OBJ_$(1))

define WS_BOARD_RULE
WS_OBJ_$(1) := $$(WS_SRC:firmware/ws/%.c=$(FW_OUT)/obj/ws-$(1)/%.o)
.SECONDARY: $$(WS_OBJ_$(1))
$(FW_OUT)/obj/ws-$(1)/%.o: firmware/ws/%.c $$(WS_HDR) mk/firmware.mk
	@mkdir -p $$(dir $$@)
	$$(FW_CC) $$(WS_CPU_$(1)) $$(WS_DEF_$(1)) $$(WS_CFLAGS) -c -o $$@ $$<
$(FW_OUT)/ws-$(1).elf: $$(WS_OBJ_$(1)) $$(FW_LD)
	$$(call ws_link,$(1),firmware/ld/default,$(FW_OUT)/ws-$(1))
endef
$(foreach b,$(WS_BOARDS),$(eval $(call WS_BOARD_RULE,$(b))))

# Relink one board with a plan's codeplace_flash.ld / codeplace_ram.ld:
# PLACE's files come before firmware/ld/default/ in the search path.
# WORKLOAD is demo (default), heavy or proto.
TARGET ?= rp2040
WORKLOAD ?= demo
FW_LINK_demo  := fw_link
FW_LINK_heavy := hv_link
FW_LINK_proto := pr_link
FW_RELINK_DEPS_demo  = $(FW_OBJ_$(FW_CPUOF_$(TARGET))) $(FW_EXTRA_$(TARGET))
FW_RELINK_DEPS_heavy = $(HV_OBJ_$(FW_CPUOF_$(TARGET))) $(HV_EXTRA_$(TARGET))
FW_RELINK_DEPS_proto = $(PR_OBJ_$(FW_CPUOF_$(TARGET))) $(PR_EXTRA_$(TARGET))
WS_TARGET := $(patsubst ws-%,%,$(filter ws-%,$(TARGET)))
relink_usage = @test -n "$(PLACE)" -a -n "$(OUT)" || { echo "usage: make -f mk/firmware.mk relink [WORKLOAD=demo|heavy|proto] TARGET=board PLACE=dir OUT=prefix" >&2; exit 2; }
relink_unknown = { echo "relink: unknown TARGET '$(TARGET)' (one of: $(FW_BOARDS) $(WS_BOARDS:%=ws-%))" >&2; exit 2; }
relink_place = @test -d "$(PLACE)" || { echo "relink: no directory '$(PLACE)'" >&2; exit 2; }
ifneq ($(WS_TARGET),)
# the whole-system echo firmware: TARGET=ws-mps2-an385 or ws-mps2-an500
relink: $(WS_OBJ_$(WS_TARGET))
	$(relink_usage)
	@test -n "$(WS_OBJ_$(WS_TARGET))" || $(relink_unknown)
	$(relink_place)
	@mkdir -p $(dir $(OUT))
	$(call ws_link,$(WS_TARGET),$(PLACE),$(OUT))
else
relink: $(FW_RELINK_DEPS_$(WORKLOAD))
	$(relink_usage)
	@test -n "$(FW_LINK_$(WORKLOAD))" || { echo "relink: unknown WORKLOAD '$(WORKLOAD)' (demo, heavy or proto)" >&2; exit 2; }
	@test -n "$(FW_CPUOF_$(TARGET))" || $(relink_unknown)
	$(relink_place)
	@mkdir -p $(dir $(OUT))
	$(call $(FW_LINK_$(WORKLOAD)),$(TARGET),$(PLACE),$(OUT))
endif

CHECK_DEPS += firmware
