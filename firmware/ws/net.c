/*
 * The IPv4 host (net.h). Frames are handled in place in the receive
 * buffer and the answer is built in a separate transmit buffer. All
 * multi-byte fields are big-endian on the wire (RFC 1700 "Data Notations")
 * and read byte by byte: the IP header is only 2-byte aligned after the
 * 14-byte Ethernet header.
 */
#include "net.h"

#include "cortexm.h"
#include "lan9118.h"
#include "ws.h"

#include <string.h>

#define ETHERTYPE_IPV4   0x0800u
#define ETHERTYPE_ARP    0x0806u
#define IP_PROTO_ICMP    1u
#define IP_PROTO_UDP     17u
#define IP_HDR_MIN       20u
#define UDP_HDR          8u
#define ICMP_ECHO_REPLY  0u
#define ICMP_ECHO_REQ    8u
#define ARP_LEN          28u
#define ARP_CACHE        8u
#define ARP_MAX_AGE      300u    /* seconds */
#define IP_TTL           64u

struct arp_entry {
    uint32_t ip;
    uint8_t mac[6];
    uint16_t age;               /* seconds since last confirmed */
};

struct net_stats net_stats;

static uint8_t my_mac[6];
static uint32_t my_ip, my_mask, my_gw;
static uint16_t ip_ident;
static struct arp_entry arp_cache[ARP_CACHE];
static uint32_t tx_buf[(LAN_FRAME_MAX + 3u) / 4u];

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
           ((uint32_t)p[2] << 8) | p[3];
}

static void put16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* RFC 1071: one's complement sum of 16-bit big-endian words, an odd last
 * byte padded with zero; not yet folded or complemented. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, uint32_t len)
{
    while (len > 1u) {
        sum += get16(p);
        p += 2;
        len -= 2u;
    }
    if (len != 0u)
        sum += (uint32_t)p[0] << 8;
    return sum;
}

/* Folds a sum of fewer than 2^16 words: two end-around carries always
 * suffice, so the same instructions run whatever the data. */
static uint16_t csum_fold(uint32_t sum)
{
    sum = (sum & 0xFFFFu) + (sum >> 16);
    sum = (sum & 0xFFFFu) + (sum >> 16);
    return (uint16_t)~sum;
}

/* UDP pseudo header (RFC 768): source, destination, protocol, length. */
static uint32_t pseudo_sum(uint32_t src, uint32_t dst, uint32_t proto,
                           uint32_t len)
{
    return (src >> 16) + (src & 0xFFFFu) + (dst >> 16) + (dst & 0xFFFFu) +
           proto + len;
}

void net_init(const uint8_t mac[6], uint32_t ip, uint32_t netmask,
              uint32_t gateway)
{
    memcpy(my_mac, mac, 6);
    my_ip = ip;
    my_mask = netmask;
    my_gw = gateway;
    ip_ident = 1;
    memset(arp_cache, 0, sizeof arp_cache);
}

/* ARP cache: learn (RFC 826 "merge") or look up. Shared with the
 * housekeeping thread, so under a short critical section. */
static void arp_learn(uint32_t ip, const uint8_t *mac, int create)
{
    uint32_t pm = cm_irq_save();
    struct arp_entry *slot = NULL;
    uint32_t i;

    for (i = 0; i < ARP_CACHE && slot == NULL; i++)
        if (arp_cache[i].ip == ip)
            slot = &arp_cache[i];
    if (slot == NULL && create) {
        /* a free entry, else the oldest */
        slot = &arp_cache[0];
        for (i = 0; i < ARP_CACHE && slot->ip != 0; i++)
            if (arp_cache[i].ip == 0 || arp_cache[i].age > slot->age)
                slot = &arp_cache[i];
    }
    if (slot != NULL && ip != 0) {
        slot->ip = ip;
        memcpy(slot->mac, mac, 6);
        slot->age = 0;
    }
    cm_irq_restore(pm);
}

static int arp_lookup(uint32_t ip, uint8_t mac[6])
{
    uint32_t pm = cm_irq_save();
    uint32_t i;

    for (i = 0; i < ARP_CACHE; i++) {
        if (arp_cache[i].ip == ip && ip != 0) {
            memcpy(mac, arp_cache[i].mac, 6);
            cm_irq_restore(pm);
            return 0;
        }
    }
    cm_irq_restore(pm);
    return -1;
}

void net_arp_age(void)
{
    uint32_t pm = cm_irq_save();
    uint32_t i;

    for (i = 0; i < ARP_CACHE; i++) {
        if (arp_cache[i].ip == 0)
            continue;
        if (++arp_cache[i].age > ARP_MAX_AGE)
            memset(&arp_cache[i], 0, sizeof arp_cache[i]);
    }
    cm_irq_restore(pm);
}

uint32_t net_arp_entries(void)
{
    uint32_t i, n = 0;

    for (i = 0; i < ARP_CACHE; i++)
        if (arp_cache[i].ip != 0)
            n++;
    return n;
}

static void send_frame(uint32_t len)
{
    if (lan9118_tx((const uint8_t *)tx_buf, len) != 0)
        net_stats.tx_failed++;
}

static void arp_input(const uint8_t *eth, uint32_t len)
{
    const uint8_t *a = eth + NET_ETH_HDR;
    uint8_t *o = (uint8_t *)tx_buf;
    uint32_t spa, tpa;
    uint16_t op;

    if (len < NET_ETH_HDR + ARP_LEN || get16(a) != 1u ||
        get16(a + 2) != ETHERTYPE_IPV4 || a[4] != 6u || a[5] != 4u)
        return;
    op = get16(a + 6);
    spa = get32(a + 14);
    tpa = get32(a + 24);
    /* RFC 826: update the sender if known; add it if we are the target */
    arp_learn(spa, a + 8, tpa == my_ip);
    if (op != 1u || tpa != my_ip)
        return;
    net_stats.arp_requests++;
    memcpy(o, a + 8, 6);                 /* to the requester */
    memcpy(o + 6, my_mac, 6);
    put16(o + 12, ETHERTYPE_ARP);
    put16(o + 14, 1u);
    put16(o + 16, ETHERTYPE_IPV4);
    o[18] = 6u;
    o[19] = 4u;
    put16(o + 20, 2u);                   /* reply */
    memcpy(o + 22, my_mac, 6);
    put32(o + 28, my_ip);
    memcpy(o + 32, a + 8, 6);
    put32(o + 38, spa);
    send_frame(NET_ETH_HDR + ARP_LEN);
}

/* The answer to the IPv4 datagram in eth: Ethernet and IP headers (no
 * options) in tx_buf, payload copied by the caller. Returns the IP header
 * in tx_buf. */
static uint8_t *ip_reply_header(const uint8_t *eth, uint32_t dst_ip,
                                uint32_t proto, uint32_t payload_len)
{
    uint8_t *o = (uint8_t *)tx_buf;
    uint8_t *ip = o + NET_ETH_HDR;
    uint32_t next_hop = ((dst_ip ^ my_ip) & my_mask) == 0 ? dst_ip : my_gw;

    if (arp_lookup(next_hop, o) != 0)
        memcpy(o, eth + 6, 6);           /* back to where it came from */
    memcpy(o + 6, my_mac, 6);
    put16(o + 12, ETHERTYPE_IPV4);
    ip[0] = 0x45u;                       /* version 4, 5 words */
    ip[1] = 0;
    put16(ip + 2, IP_HDR_MIN + payload_len);
    put16(ip + 4, ip_ident++);
    put16(ip + 6, 0x4000u);              /* don't fragment */
    ip[8] = IP_TTL;
    ip[9] = (uint8_t)proto;
    put16(ip + 10, 0);
    put32(ip + 12, my_ip);
    put32(ip + 16, dst_ip);
    put16(ip + 10, csum_fold(csum_add(0, ip, IP_HDR_MIN)));
    return ip;
}

static void icmp_input(const uint8_t *eth, uint32_t src, const uint8_t *icmp,
                       uint32_t len)
{
    uint8_t *ip, *o;

    if (len < 8u || csum_fold(csum_add(0, icmp, len)) != 0) {
        net_stats.ip_bad++;
        return;
    }
    if (icmp[0] != ICMP_ECHO_REQ || icmp[1] != 0)
        return;
    net_stats.icmp_echoes++;
    ip = ip_reply_header(eth, src, IP_PROTO_ICMP, len);
    o = ip + IP_HDR_MIN;
    memcpy(o, icmp, len);
    o[0] = ICMP_ECHO_REPLY;
    put16(o + 2, 0);
    put16(o + 2, csum_fold(csum_add(0, o, len)));
    send_frame(NET_ETH_HDR + IP_HDR_MIN + len);
}

static void udp_input(const uint8_t *eth, uint32_t src, uint32_t dst,
                      const uint8_t *udp, uint32_t len)
{
    uint32_t ulen, sum;
    uint16_t sport, dport, cks;
    uint8_t *ip, *o;

    if (len < UDP_HDR) {
        net_stats.udp_bad++;
        return;
    }
    ulen = get16(udp + 4);
    if (ulen < UDP_HDR || ulen > len) {
        net_stats.udp_bad++;
        return;
    }
    /* checksum 0: the sender did not compute one (RFC 768) */
    if (get16(udp + 6) != 0) {
        sum = csum_add(pseudo_sum(src, dst, IP_PROTO_UDP, ulen), udp, ulen);
        if (csum_fold(sum) != 0) {
            net_stats.udp_bad++;
            return;
        }
    }
    sport = get16(udp);
    dport = get16(udp + 2);
    if (dport != NET_UDP_ECHO || dst != my_ip) {
        net_stats.udp_unreach++;
        return;
    }

    codeplace_mark();
    net_stats.udp_echoes++;
    ws_on_udp_echo(src, sport, udp + UDP_HDR, ulen - UDP_HDR);

    ip = ip_reply_header(eth, src, IP_PROTO_UDP, ulen);
    o = ip + IP_HDR_MIN;
    put16(o, dport);
    put16(o + 2, sport);
    put16(o + 4, ulen);
    put16(o + 6, 0);
    memcpy(o + UDP_HDR, udp + UDP_HDR, ulen - UDP_HDR);
    sum = csum_add(pseudo_sum(my_ip, src, IP_PROTO_UDP, ulen), o, ulen);
    cks = csum_fold(sum);
    put16(o + 6, cks == 0 ? 0xFFFFu : cks);   /* 0 would mean "none" */
    send_frame(NET_ETH_HDR + IP_HDR_MIN + ulen);
}

static void ipv4_input(const uint8_t *eth, uint32_t len)
{
    const uint8_t *ip = eth + NET_ETH_HDR;
    uint32_t ihl, total, src, dst;

    if (len < NET_ETH_HDR + IP_HDR_MIN || (ip[0] >> 4) != 4u) {
        net_stats.ip_bad++;
        return;
    }
    ihl = (ip[0] & 0xFu) * 4u;
    total = get16(ip + 2);
    if (ihl < IP_HDR_MIN || total < ihl || NET_ETH_HDR + total > len ||
        csum_fold(csum_add(0, ip, ihl)) != 0) {
        net_stats.ip_bad++;
        return;
    }
    src = get32(ip + 12);
    dst = get32(ip + 16);
    if ((get16(ip + 6) & 0x3FFFu) != 0 ||       /* MF or an offset */
        (dst != my_ip && dst != 0xFFFFFFFFu && dst != (my_ip | ~my_mask))) {
        net_stats.ip_other++;
        return;
    }
    switch (ip[9]) {
    case IP_PROTO_ICMP:
        if (dst == my_ip)
            icmp_input(eth, src, ip + ihl, total - ihl);
        break;
    case IP_PROTO_UDP:
        udp_input(eth, src, dst, ip + ihl, total - ihl);
        break;
    default:
        net_stats.ip_other++;
        break;
    }
}

void net_input(uint8_t *frame, uint32_t len)
{
    if (len < NET_ETH_HDR)
        return;
    switch (get16(frame + 12)) {
    case ETHERTYPE_ARP:
        arp_input(frame, len);
        break;
    case ETHERTYPE_IPV4:
        ipv4_input(frame, len);
        break;
    default:
        break;
    }
}
