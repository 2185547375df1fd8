/*
 * The application: three threads on the kernel.
 *   house (priority 3) once a second: ages the ARP cache, checks the PHY's
 *                      link, folds the counters into a health word.
 *                      Short, so it preempts the network
 *                      thread: its work follows the SysTick interrupt that
 *                      woke it at once, never the next echo's.
 *   net  (priority 2)  woken by the LAN9118 interrupt through
 *                      lan9118_rx_sem; drains the RX FIFO into net_input()
 *                      and re-enables the interrupt
 *   idle (priority 0)  WFI (kernel.c)
 * Per UDP echo the application keeps a table of peers (address, port,
 * datagrams, bytes), a CRC-32 of the payloads folded into codeplace_result,
 * and an audit hash chain, as a tamper-evident request log does:
 * chain = SHA-256(chain || source address, port, length || payload).
 */
#include "ws.h"

#include "board.h"
#include "kernel.h"
#include "lan9118.h"
#include "net.h"
#include "sha256.h"
#include "uart.h"

#include <stddef.h>
#include <string.h>

#define PEERS          8u
#define HOUSE_PERIOD   K_TICK_HZ              /* 1 s */

struct peer {
    uint32_t ip;
    uint16_t port;
    uint16_t used;            /* 0: free */
    uint32_t datagrams;
    uint32_t bytes;
    uint32_t last_seen;        /* echo sequence number */
};

volatile uint32_t codeplace_result = 0x811c9dc5u;
volatile uint32_t ws_health;
volatile uint32_t ws_link_changes;

static struct k_thread net_thread, house_thread;
static uint32_t net_stack[512] __attribute__((aligned(8)));
static uint32_t house_stack[256] __attribute__((aligned(8)));
static uint32_t rx_buf[(LAN_FRAME_MAX + 4u + 3u) / 4u];
static uint32_t crc_table[256];
static struct peer peers[PEERS];
static uint32_t echo_seq;
uint8_t ws_audit_chain[32];

/* CRC-32 of IEEE 802.3 (reflected polynomial 0xEDB88320), table-driven. */
static void crc32_init(void)
{
    uint32_t i, j, c;

    for (i = 0; i < 256u; i++) {
        c = i;
        for (j = 0; j < 8u; j++)
            c = (c & 1u) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        crc_table[i] = c;
    }
}

static uint32_t crc32(const uint8_t *p, uint32_t len)
{
    uint32_t c = 0xFFFFFFFFu;

    while (len-- > 0u)
        c = crc_table[(c ^ *p++) & 0xFFu] ^ (c >> 8);
    return ~c;
}

static struct peer *peer_find(uint32_t ip, uint16_t port)
{
    struct peer *p, *victim = &peers[0];
    uint32_t i, h = (ip ^ (ip >> 16) ^ port) % PEERS;

    /* open addressing from the hash slot; a full table replaces the
     * least recently seen peer */
    for (i = 0; i < PEERS; i++) {
        p = &peers[(h + i) % PEERS];
        if (p->used && p->ip == ip && p->port == port)
            return p;
        if (!p->used) {
            victim = p;
            break;
        }
        if (p->last_seen < victim->last_seen)
            victim = p;
    }
    memset(victim, 0, sizeof *victim);
    victim->ip = ip;
    victim->port = port;
    victim->used = 1;
    return victim;
}

void ws_on_udp_echo(uint32_t src_ip, uint16_t src_port,
                    const uint8_t *payload, uint32_t len)
{
    struct peer *p = peer_find(src_ip, src_port);
    uint32_t crc = crc32(payload, len);
    struct sha256 h;
    uint8_t rec[8];

    rec[0] = (uint8_t)(src_ip >> 24);
    rec[1] = (uint8_t)(src_ip >> 16);
    rec[2] = (uint8_t)(src_ip >> 8);
    rec[3] = (uint8_t)src_ip;
    rec[4] = (uint8_t)(src_port >> 8);
    rec[5] = (uint8_t)src_port;
    rec[6] = (uint8_t)(len >> 8);
    rec[7] = (uint8_t)len;
    sha256_init(&h);
    sha256_update(&h, ws_audit_chain, sizeof ws_audit_chain);
    sha256_update(&h, rec, sizeof rec);
    sha256_update(&h, payload, len);
    sha256_final(&h, ws_audit_chain);

    p->datagrams++;
    p->bytes += len;
    p->last_seen = ++echo_seq;
    codeplace_result = (codeplace_result ^ crc) * 16777619u + p->datagrams;
}

static void net_entry(void *arg)
{
    uint32_t len;

    (void)arg;
    for (;;) {
        k_sem_wait(&lan9118_rx_sem);
        for (;;) {
            while (lan9118_rx_pending() != 0u) {
                len = lan9118_rx((uint8_t *)rx_buf);
                if (len != 0u)
                    net_input((uint8_t *)rx_buf, len);
            }
            lan9118_rx_irq_enable();
            /* a frame that came in before the interrupt was re-enabled
             * raised no interrupt: look once more */
            if (lan9118_rx_pending() == 0u)
                break;
        }
    }
}

static void house_entry(void *arg)
{
    uint32_t next = k_ticks();
    int link, last_link = -1;

    (void)arg;
    for (;;) {
        next += HOUSE_PERIOD;
        k_sleep_until(next);
        net_arp_age();
        link = lan9118_link_up();
        if (link != last_link) {
            ws_link_changes++;
            last_link = link;
        }
        ws_health = net_stats.udp_echoes ^ (lan9118_stats.rx_errors << 8) ^
                    (lan9118_stats.tx_errors << 16) ^ (net_arp_entries() << 24) ^
                    k_switch_count;
    }
}

static void put_mac(const uint8_t mac[6])
{
    static const char digits[] = "0123456789abcdef";
    char s[18];
    int i;

    for (i = 0; i < 6; i++) {
        s[3 * i] = digits[mac[i] >> 4];
        s[3 * i + 1] = digits[mac[i] & 0xFu];
        s[3 * i + 2] = i == 5 ? '\0' : ':';
    }
    uart_puts(s);
}

void ws_main(void)
{
    uint8_t mac[6];

    uart_init();
    uart_puts("ws: codeplace echo firmware on " WS_BOARD_NAME "\n");
    crc32_init();
    k_init();
    if (lan9118_init(mac) != 0) {
        uart_puts("ws: no LAN9118 at ");
        uart_put_hex(WS_ETH_BASE);
        uart_puts("\n");
        for (;;)
            __asm__ volatile ("wfi" ::: "memory");
    }
    net_init(mac, WS_IP, WS_NETMASK, WS_GATEWAY);
    k_thread_create(&net_thread, "net", 2, net_stack,
                    sizeof net_stack / sizeof net_stack[0], net_entry, NULL);
    k_thread_create(&house_thread, "house", 3, house_stack,
                    sizeof house_stack / sizeof house_stack[0], house_entry, NULL);
    uart_puts("ws: mac ");
    put_mac(mac);
    uart_puts(lan9118_link_up() ? ", link up" : ", link down");
    uart_puts(", ip 10.0.2.15, udp echo on port 7\n");
    k_start();
}
