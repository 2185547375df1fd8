/* libFuzzer harness: the usbmon readers. The input is read as a capture
 * file (pcap/pcapng through libpcap, or usbmon text, told apart by its first
 * bytes), then as usbmon text, then as one raw packet of each usbmon link
 * type fed to the pairing (ECM/NCM frame and NTB parsing). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bench/usbmon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void pair_packet(int dlt, int mode, const uint8_t *data, size_t size)
{
    nb_usbmon_cfg cfg = {.bus = -1, .dev = -1, .mode = mode};
    nb_usbmon *u = nb_usbmon_new(&cfg);
    nb_usb_ev ev;
    if (u && nb_usb_decode(dlt, data, size, &ev) == 0) {
        /* The same data as an OUT submission, its completion and an IN
         * completion: runs the frame and NTB parsers both ways. */
        ev.xfer = 3;
        ev.ep = 0x02;
        ev.type = 'S';
        nb_usbmon_feed(u, &ev);
        ev.type = 'C';
        ev.status = 0;
        nb_usbmon_feed(u, &ev);
        ev.ep = 0x81;
        nb_usbmon_feed(u, &ev);
        size_t n;
        nb_usbmon_echoes(u, &n);
        for (size_t i = 0; i < n; i++) {
            double e, h, b, d;
            nb_usbmon_split(u, i, &e, &h, &b, &d);
        }
    }
    nb_usbmon_free(u);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cp_err err;
    nb_usbmon_cfg cfg = {.bus = -1, .dev = -1};
    nb_usbmon *u = nb_usbmon_new(&cfg);
    FILE *f = size ? fmemopen((void *)data, size, "rb") : NULL;
    if (u && f)
        nb_usbmon_read_fp(u, f, "fuzz", &err); /* closes f */
    else if (f)
        fclose(f);
    nb_usbmon_free(u);

    u = nb_usbmon_new(&cfg);
    if (u)
        nb_usbmon_parse_text(u, (const char *)data, size, "fuzz", &err);
    nb_usbmon_free(u);

    pair_packet(NB_DLT_USB_LINUX, NB_USB_AUTO, data, size);
    pair_packet(NB_DLT_USB_LINUX_MMAPPED, NB_USB_NCM, data, size);
    return 0;
}
