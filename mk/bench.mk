# bench: the capture writer the usbmon tests use (libpcap's pcap_dump).
build/tests/mkusbcap: tests/bench/mkusbcap.c tests/bench/usbcap.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O1 -o $@ $< -lpcap

CHECK_DEPS += build/tests/mkusbcap

build/san/tests/t-bench: tests/bench/usbcap.h
