/* USB device stack (subsys/usb/device, USB_DEVICE_STACK) with the CDC-ECM
 * function (USB_DEVICE_NETWORK_ECM), as Zephyr 3.5.0 builds it for the
 * RP2040 and the i.MX RT: the class and its descriptors come from Kconfig,
 * the application only enables the stack (include/zephyr/usb/usb_device.h;
 * USB_DEVICE_INITIALIZE_AT_BOOT applies to the CDC-ACM console only). */
#include <zephyr/logging/log.h>
#include <zephyr/usb/usb_device.h>

#include "netif.h"

LOG_MODULE_REGISTER(udp_echo_usb, LOG_LEVEL_INF);

int udp_echo_netif_start(void)
{
	int err = usb_enable(NULL);

	if (err)
		LOG_ERR("USB start failed (%d)", err);
	return err;
}
