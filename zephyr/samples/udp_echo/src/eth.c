/* The board's own Ethernet controller (UDP_ECHO_ETH): its driver brings the
 * interface up at boot, there is nothing to start. */
#include "netif.h"

int udp_echo_netif_start(void)
{
	return 0;
}
