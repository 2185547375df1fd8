/*
 * A minimal IPv4 host on Ethernet: ARP (RFC 826) requests answered and
 * senders learnt, IPv4 (RFC 791) without fragments or options processing,
 * ICMP echo (RFC 792), UDP (RFC 768) with checksums checked and computed
 * (RFC 1071), the echo service on port 7 (RFC 862).
 */
#ifndef WS_NET_H
#define WS_NET_H

#include <stdint.h>

#define NET_ETH_HDR   14u
#define NET_UDP_ECHO  7u

struct net_stats {
    uint32_t arp_requests;   /* for our address, answered */
    uint32_t ip_bad;         /* header checksum, length, version */
    uint32_t ip_other;       /* not for us, fragments, other protocols */
    uint32_t icmp_echoes;
    uint32_t udp_bad;        /* checksum or length */
    uint32_t udp_echoes;
    uint32_t udp_unreach;    /* to a port nobody listens on: dropped */
    uint32_t tx_failed;
};

/* ip, gateway in host order (10.0.2.15 is 0x0A00020F). */
void net_init(const uint8_t mac[6], uint32_t ip, uint32_t netmask,
              uint32_t gateway);
/* One received frame without its FCS; may transmit the answer. */
void net_input(uint8_t *frame, uint32_t len);
/* Housekeeping: ages the ARP cache by one second. */
void net_arp_age(void);
uint32_t net_arp_entries(void);

extern struct net_stats net_stats;

/* Provided by the application: called for every valid UDP datagram to the
 * echo port, before the echo is sent back unchanged. */
void ws_on_udp_echo(uint32_t src_ip, uint16_t src_port,
                    const uint8_t *payload, uint32_t len);

#endif
