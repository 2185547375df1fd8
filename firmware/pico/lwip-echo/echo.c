/*
 * A UDP echo through lwIP (NO_SYS=1) driven by injected Ethernet frames:
 * the harness shape of the codeplace firmware (codeplace.h).
 *
 * The board is 10.0.7.2 (MAC 02:00:00:00:07:02), the peer 10.0.7.1
 * (02:00:00:00:07:01). The netif's linkoutput does not send: it copies the
 * outgoing frame into `reply`.
 *
 * codeplace_init(): lwip_init(), the netif (up, link up), a UDP pcb on
 * port 7 whose receive callback sends the datagram back (udp_sendto) and,
 * to resolve ARP, one injected ARP request from the peer for the board's
 * address: lwIP answers it and enters the peer in its ARP table.
 *
 * codeplace_iteration(): build one request frame (Ethernet, IPv4, UDP with
 * its checksum; payload length 18..529 and bytes from a xorshift generator
 * seeded with the iteration number), feed it to ethernet_input() through
 * netif->input, and check the one reply: Ethernet and IP addresses and UDP
 * ports swapped, lengths, both checksums, the payload unchanged. The
 * CRC-32 of the reply frame is folded into codeplace_result
 * (result = (result ^ crc) * 16777619 + reply length), and every failed
 * check counts in codeplace_errors and in the result.
 */
#include "codeplace.h"
#include "demo.h"

#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/udp.h"
#include "netif/ethernet.h"

#include <string.h>

#define ECHO_PORT     7
#define ETH_HDR       14
#define IP_HDR        20
#define UDP_HDR       8
#define FRAME_MAX     600
#define PAYLOAD_MIN   18
#define PAYLOAD_SPAN  512

volatile uint32_t codeplace_result;
volatile uint32_t codeplace_errors;

static const uint8_t board_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x07, 0x02 };
static const uint8_t peer_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x07, 0x01 };
static const uint8_t board_ip[4] = { 10, 0, 7, 2 };
static const uint8_t peer_ip[4] = { 10, 0, 7, 1 };

static struct netif echo_netif;
static uint32_t seq;
static uint8_t frame[FRAME_MAX];
static uint8_t reply[FRAME_MAX];
static unsigned reply_len, replies;

/* xorshift32 (Marsaglia 2003): the request's length, port and bytes */
static uint32_t xorshift(uint32_t *state)
{
    uint32_t x = *state;

    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

/* The Internet checksum's one's-complement sum (RFC 1071), not inverted. */
static uint32_t sum16(uint32_t sum, const uint8_t *p, unsigned len)
{
    while (len > 1) {
        sum += get16(p);
        p += 2;
        len -= 2;
    }
    if (len)
        sum += (uint32_t)p[0] << 8;
    while (sum >> 16)
        sum = (sum & 0xffffu) + (sum >> 16);
    return sum;
}

/* The UDP checksum's pseudo header (RFC 768) plus the UDP datagram. */
static uint32_t udp_sum(const uint8_t *ip, const uint8_t *udp, unsigned len)
{
    uint8_t pseudo[12];

    memcpy(pseudo, ip + 12, 8);
    pseudo[8] = 0;
    pseudo[9] = 17;
    put16(pseudo + 10, len);
    return sum16(sum16(0, pseudo, sizeof pseudo), udp, len);
}

static err_t capture(struct netif *nif, struct pbuf *p)
{
    (void)nif;
    replies++;
    if (p->tot_len > sizeof reply) {
        codeplace_errors++;
        reply_len = 0;
        return ERR_OK;
    }
    reply_len = pbuf_copy_partial(p, reply, p->tot_len, 0);
    return ERR_OK;
}

static err_t netif_setup(struct netif *nif)
{
    nif->name[0] = 'e';
    nif->name[1] = '0';
    nif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(nif->hwaddr, board_mac, sizeof board_mac);
    nif->mtu = 1500;
    nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    nif->output = etharp_output;
    nif->linkoutput = capture;
    return ERR_OK;
}

static void echo_recv(void *arg, struct udp_pcb *pcb, struct pbuf *p,
                      const ip_addr_t *addr, u16_t port)
{
    (void)arg;
    if (udp_sendto(pcb, p, addr, port) != ERR_OK)
        codeplace_errors++;
    pbuf_free(p);
}

/* Hands one frame to lwIP as a driver's receive path would. */
static void inject(const uint8_t *f, unsigned len)
{
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);

    replies = 0;
    reply_len = 0;
    if (p == NULL || pbuf_take(p, f, (u16_t)len) != ERR_OK) {
        codeplace_errors++;
        if (p)
            pbuf_free(p);
        return;
    }
    if (echo_netif.input(p, &echo_netif) != ERR_OK) {
        codeplace_errors++;
        pbuf_free(p);
    }
}

static void eth_header(uint8_t *f, const uint8_t *dst, unsigned type)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, peer_mac, 6);
    put16(f + 12, type);
}

/* An ARP request (RFC 826) from the peer for the board's address. */
static void resolve_peer(void)
{
    static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t *a = frame + ETH_HDR;
    unsigned len = 60; /* minimum Ethernet frame without the FCS */
    ip4_addr_t peer;
    struct eth_addr *mac;
    const ip4_addr_t *ip;

    memset(frame, 0, len);
    eth_header(frame, broadcast, 0x0806);
    put16(a, 1);            /* hardware type: Ethernet */
    put16(a + 2, 0x0800);   /* protocol: IPv4 */
    a[4] = 6;
    a[5] = 4;
    put16(a + 6, 1);        /* request */
    memcpy(a + 8, peer_mac, 6);
    memcpy(a + 14, peer_ip, 4);
    memcpy(a + 24, board_ip, 4);
    inject(frame, len);
    /* the answer: an ARP reply to the peer with the board's MAC */
    if (replies != 1 || reply_len < ETH_HDR + 28 || memcmp(reply, peer_mac, 6) != 0 ||
        get16(reply + 12) != 0x0806 || get16(reply + ETH_HDR + 6) != 2 ||
        memcmp(reply + ETH_HDR + 8, board_mac, 6) != 0)
        codeplace_errors++;
    IP4_ADDR(&peer, peer_ip[0], peer_ip[1], peer_ip[2], peer_ip[3]);
    if (etharp_find_addr(&echo_netif, &peer, &mac, &ip) < 0 ||
        memcmp(mac->addr, peer_mac, 6) != 0)
        codeplace_errors++;
}

void codeplace_init(void)
{
    ip4_addr_t addr, mask, gw;
    struct udp_pcb *pcb;

    codeplace_runtime_init();
    seq = 0;
    codeplace_errors = 0;
    codeplace_result = 0x811c9dc5u;
    demo_crc32_init();
    lwip_init();
    IP4_ADDR(&addr, board_ip[0], board_ip[1], board_ip[2], board_ip[3]);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, peer_ip[0], peer_ip[1], peer_ip[2], peer_ip[3]);
    if (netif_add(&echo_netif, &addr, &mask, &gw, NULL, netif_setup,
                  ethernet_input) == NULL) {
        codeplace_errors++;
        return;
    }
    netif_set_default(&echo_netif);
    netif_set_up(&echo_netif);
    netif_set_link_up(&echo_netif); /* sends a gratuitous ARP: captured */
    pcb = udp_new();
    if (pcb == NULL || udp_bind(pcb, IP4_ADDR_ANY, ECHO_PORT) != ERR_OK) {
        codeplace_errors++;
        return;
    }
    udp_recv(pcb, echo_recv, NULL);
    resolve_peer();
}

/* Builds request number `n` into `frame`; returns the frame's length. */
static unsigned make_request(uint32_t n, unsigned *sport)
{
    uint32_t state = n * 2654435761u + 1u;
    unsigned i, plen, len;
    uint8_t *ip = frame + ETH_HDR, *udp = ip + IP_HDR;

    plen = PAYLOAD_MIN + xorshift(&state) % PAYLOAD_SPAN;
    *sport = 49152 + xorshift(&state) % 16384;
    len = ETH_HDR + IP_HDR + UDP_HDR + plen;
    eth_header(frame, board_mac, 0x0800);
    ip[0] = 0x45;
    ip[1] = 0;
    put16(ip + 2, IP_HDR + UDP_HDR + plen);
    put16(ip + 4, n & 0xffffu);     /* identification */
    put16(ip + 6, 0x4000);          /* don't fragment */
    ip[8] = 64;
    ip[9] = 17;
    put16(ip + 10, 0);
    memcpy(ip + 12, peer_ip, 4);
    memcpy(ip + 16, board_ip, 4);
    put16(ip + 10, ~sum16(0, ip, IP_HDR) & 0xffffu);
    put16(udp, *sport);
    put16(udp + 2, ECHO_PORT);
    put16(udp + 4, UDP_HDR + plen);
    put16(udp + 6, 0);
    for (i = 0; i < plen; i++)
        udp[UDP_HDR + i] = (uint8_t)(xorshift(&state) >> 7);
    i = ~udp_sum(ip, udp, UDP_HDR + plen) & 0xffffu;
    put16(udp + 6, i ? i : 0xffffu);
    return len;
}

/* The checks of one echo reply; returns the number that failed. */
static unsigned check_reply(unsigned len, unsigned sport)
{
    const uint8_t *rip = reply + ETH_HDR, *rudp = rip + IP_HDR;
    const uint8_t *qudp = frame + ETH_HDR + IP_HDR;
    unsigned bad = 0, ulen = len - ETH_HDR - IP_HDR;

    if (replies != 1 || reply_len != len)
        return 1;
    bad += memcmp(reply, peer_mac, 6) != 0;
    bad += memcmp(reply + 6, board_mac, 6) != 0;
    bad += get16(reply + 12) != 0x0800;
    bad += rip[0] != 0x45 || rip[9] != 17;
    bad += get16(rip + 2) != len - ETH_HDR;
    bad += memcmp(rip + 12, board_ip, 4) != 0 || memcmp(rip + 16, peer_ip, 4) != 0;
    bad += sum16(0, rip, IP_HDR) != 0xffffu;
    bad += get16(rudp) != ECHO_PORT || get16(rudp + 2) != sport;
    bad += get16(rudp + 4) != ulen;
    bad += get16(rudp + 6) != 0 && udp_sum(rip, rudp, ulen) != 0xffffu;
    bad += memcmp(rudp + UDP_HDR, qudp + UDP_HDR, ulen - UDP_HDR) != 0;
    return bad;
}

void codeplace_iteration(void)
{
    unsigned len, sport, bad;
    uint32_t crc;

    seq++;
    len = make_request(seq, &sport);
    inject(frame, len);
    bad = check_reply(len, sport);
    codeplace_errors += bad;
    crc = demo_crc32(0, reply, reply_len);
    codeplace_result = (codeplace_result ^ crc) * 16777619u + reply_len + (bad << 16);
}
