/* nb usbmon: how long a USB network device takes per echo, from a capture
 * of the host's USB traffic (Linux usbmon).
 *
 * Input: pcap/pcapng files of DLT_USB_LINUX (189, 48-byte header) or
 * DLT_USB_LINUX_MMAPPED (220, 64-byte header), written on a host of either
 * byte order (libpcap reads them); the usbmon text format
 * (/sys/kernel/debug/usb/usbmon/Nu); or a live capture on usbmonN.
 *
 * Pairing: usbmon records OUT data at the submission (S) and IN data at the
 * completion (C). Every Ethernet frame of a bulk OUT transfer that is a
 * request (ICMP/ICMPv6 echo request, or a UDP datagram) gets a key from its
 * addresses, ports or id/sequence and payload; the first bulk IN completion
 * carrying a frame with the mirrored key is its reply. CDC-ECM transfers
 * hold one frame; CDC-NCM transfers hold an NTB16 ("NCMH" header, "NCM0" /
 * "NCM1" datagram pointer tables) with several. The text format keeps only
 * 32 bytes of data, too few to see an IP payload, so there each bulk IN
 * completion answers the oldest unanswered OUT completion (first in, first
 * out), one echo per transfer.
 *
 * Per echo: out_s (OUT submitted), out_c (OUT completed: the device took
 * the request), in_c (the IN transfer with the reply completed). Split:
 *   bus    = out_c - out_s   the OUT transfer, including NAKs
 *   device = in_c - out_c    the device's turnaround (and the IN transfer)
 *   host   = next out_s - in_c, when the next request left after this reply
 *                            (closed loop); otherwise not counted. */
#ifndef CP_NB_USBMON_H
#define CP_NB_USBMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util/util.h"

#define NB_DLT_USB_LINUX 189
#define NB_DLT_USB_LINUX_MMAPPED 220

/* One usbmon event, fields in host order. */
typedef struct nb_usb_ev {
    uint64_t id;         /* URB tag: pairs S with C */
    uint64_t ts_ns;
    char type;           /* 'S' submit, 'C' complete, 'E' error */
    uint8_t xfer;        /* 0 iso, 1 interrupt, 2 control, 3 bulk */
    uint8_t ep;          /* endpoint; bit 7 set for IN */
    uint8_t dev;
    uint16_t bus;
    int32_t status;
    uint32_t urb_len;    /* length asked for (S) or done (C) */
    const uint8_t *data; /* captured data, may be shorter than urb_len */
    uint32_t data_len;
} nb_usb_ev;

/* Decodes the usbmon header at the front of one captured packet of the
 * given link type (bytes already in host order, as libpcap delivers them).
 * Returns 0, or -1 when the packet is too short or the type unknown. */
int nb_usb_decode(int dlt, const uint8_t *pkt, size_t caplen, nb_usb_ev *ev);

enum { NB_USB_AUTO, NB_USB_ECM, NB_USB_NCM };

typedef struct nb_usbmon_cfg {
    int bus, dev;   /* -1: any */
    unsigned port;  /* UDP port of the echo (either side); 0: any */
    int mode;       /* NB_USB_AUTO, _ECM, _NCM */
} nb_usbmon_cfg;

typedef struct nb_usb_echo {
    uint64_t out_s, out_c, in_c;
} nb_usb_echo;

typedef struct nb_usbmon_counts {
    uint64_t events, bulk_out, bulk_in, frames_out, frames_in, requests;
    uint64_t echoes, unanswered, ncm_blocks, bad_ntb, skipped;
    int text;       /* text format: first-in-first-out pairing */
    int ncm;        /* NTBs were seen */
    int dlt;        /* link type of a pcap input, 0 for text */
} nb_usbmon_counts;

typedef struct nb_usbmon nb_usbmon;

nb_usbmon *nb_usbmon_new(const nb_usbmon_cfg *cfg);
void nb_usbmon_free(nb_usbmon *u);
/* Feeds one event (in time order). Returns 0 or -1 (out of memory). */
int nb_usbmon_feed(nb_usbmon *u, const nb_usb_ev *ev);

/* Reads a capture file: pcap/pcapng or text, told apart by the first
 * bytes. name is used in messages. Returns 0 or -1 with err filled. */
int nb_usbmon_read(nb_usbmon *u, const char *path, cp_err *err);
/* The same from an open stream (the fuzz harness uses fmemopen); closes f. */
int nb_usbmon_read_fp(nb_usbmon *u, FILE *f, const char *name, cp_err *err);
/* Parses usbmon text from memory. */
int nb_usbmon_parse_text(nb_usbmon *u, const char *buf, size_t len,
                         const char *name, cp_err *err);
/* Live capture on an interface such as "usbmon1" until duration_s passes
 * or *stop is set. Needs root. */
int nb_usbmon_live(nb_usbmon *u, const char *ifname, double duration_s,
                   volatile sig_atomic_t *stop, cp_err *err);

/* Results: echoes in order of their replies. */
const nb_usb_echo *nb_usbmon_echoes(const nb_usbmon *u, size_t *n);
const nb_usbmon_counts *nb_usbmon_counts_of(const nb_usbmon *u);

/* The split for echo i (NAN host when not closed-loop), in microseconds. */
void nb_usbmon_split(const nb_usbmon *u, size_t i, double *echo_us,
                     double *host_us, double *bus_us, double *device_us);

#endif
