/* The sample's network interface: started by main() before the address is
 * applied. One implementation is built, chosen by the Kconfig choice
 * UDP_ECHO_NETIF (CMakeLists.txt): src/eth.c, src/usb_legacy.c or
 * src/usbd_next.c. Returns 0 or a negative errno. */
#ifndef UDP_ECHO_NETIF_H
#define UDP_ECHO_NETIF_H

int udp_echo_netif_start(void);

#endif
