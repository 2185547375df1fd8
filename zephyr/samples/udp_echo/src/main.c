/* codeplace benchmark sample: echoes every UDP datagram sent to port
 * CONFIG_UDP_ECHO_PORT (7) back to its sender; ICMP echo is answered by the
 * IP stack. The network interface is the one of the Kconfig choice
 * UDP_ECHO_NETIF (netif.h), the address CONFIG_NET_CONFIG_MY_IPV4_ADDR
 * (192.0.2.1/24 over USB, 10.0.2.15 in QEMU: prj.conf, boards/), applied by
 * net_config_init_app() once the interface is started. */
#include <errno.h>
#include <zephyr/kernel.h>
#include <zephyr/logging/log.h>
#include <zephyr/net/net_config.h>
#include <zephyr/net/socket.h>

#include "netif.h"

LOG_MODULE_REGISTER(udp_echo, LOG_LEVEL_INF);

static uint8_t buf[CONFIG_UDP_ECHO_BUF_SIZE];

int main(void)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(CONFIG_UDP_ECHO_PORT),
		.sin_addr = {.s_addr = htonl(INADDR_ANY)},
	};
	int sock;

	if (udp_echo_netif_start() != 0)
		return 0;
	(void)net_config_init_app(NULL, "codeplace udp_echo");

	sock = zsock_socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	if (sock < 0 || zsock_bind(sock, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		LOG_ERR("cannot bind UDP port %d (%d)", CONFIG_UDP_ECHO_PORT, errno);
		return 0;
	}
	LOG_INF("UDP echo on %s:%d", CONFIG_NET_CONFIG_MY_IPV4_ADDR, CONFIG_UDP_ECHO_PORT);

	for (;;) {
		struct sockaddr_in peer;
		socklen_t plen = sizeof(peer);
		ssize_t n = zsock_recvfrom(sock, buf, sizeof(buf), 0,
					   (struct sockaddr *)&peer, &plen);

		if (n < 0) {
			LOG_WRN("recvfrom: %d", errno);
			continue;
		}
		(void)zsock_sendto(sock, buf, (size_t)n, 0, (struct sockaddr *)&peer, plen);
	}
	return 0;
}
