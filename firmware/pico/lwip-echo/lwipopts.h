/*
 * lwIP options of the UDP echo (firmware/pico/lwip-echo): NO_SYS=1, IPv4,
 * Ethernet with ARP, UDP and ICMP, nothing else. The same file configures
 * the pico-sdk build and the host build (firmware/pico/host), so both
 * compile the same lwIP.
 */
#ifndef LWIPOPTS_H
#define LWIPOPTS_H

#define NO_SYS                  1
/* Frames are injected by the harness and nothing waits on time: no
 * cyclic timers (ARP entries never age), so no sys_now() either. */
#define LWIP_TIMERS             0
#define SYS_LIGHTWEIGHT_PROT    0
#define LWIP_SOCKET             0
#define LWIP_NETCONN            0

#define LWIP_IPV4               1
#define LWIP_IPV6               0
#define LWIP_ARP                1
#define LWIP_ETHERNET           1
#define LWIP_ICMP               1
#define LWIP_UDP                1
#define LWIP_TCP                0
#define LWIP_RAW                0
#define LWIP_DHCP               0
#define LWIP_AUTOIP             0
#define LWIP_ACD                0
#define LWIP_IGMP               0
#define LWIP_DNS                0
#define IP_REASSEMBLY           0
#define IP_FRAG                 0

#define MEM_ALIGNMENT           4
#define MEM_SIZE                4096
#define MEMP_NUM_PBUF           8
#define MEMP_NUM_UDP_PCB        2
#define PBUF_POOL_SIZE          6
#define PBUF_POOL_BUFSIZE       1536
#define ARP_TABLE_SIZE          4
#define LWIP_STATS              0
#define LWIP_NETIF_STATUS_CALLBACK 0
#define LWIP_NETIF_LINK_CALLBACK   0

/* pico-sdk's arch/cc.h takes LWIP_RAND from pico_rand (ring oscillator
 * bits, the clock): the echo binds a fixed port and needs no randomness,
 * and a fixed value keeps the board and the host builds alike. */
#define LWIP_RAND()             ((u32_t)0x2545f491u)

#endif
