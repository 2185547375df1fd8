/* USB device (device_next, USB_DEVICE_STACK_NEXT): one full-speed
 * configuration with every class instance the devicetree and Kconfig enable
 * (here: the CDC-NCM or CDC-ECM network function). The API is that of
 * include/zephyr/usb/usbd.h in Zephyr 4.0 and later (per-speed
 * configurations: USBD_SPEED_FS, USBD_CONFIGURATION_DEFINE with four
 * arguments); the Kconfig choice UDP_ECHO_NETIF selects this file there.
 * On Zephyr 3.5.0 the sample uses src/usb_legacy.c instead. */
#include <zephyr/device.h>
#include <zephyr/logging/log.h>
#include <zephyr/usb/usbd.h>

#include "netif.h"

LOG_MODULE_REGISTER(udp_echo_usb, LOG_LEVEL_INF);

/* 0x2fe3/0x0001: Zephyr's test VID/PID, for development only. */
USBD_DEVICE_DEFINE(echo_usbd, DEVICE_DT_GET(DT_NODELABEL(zephyr_udc0)), 0x2fe3, 0x0001);
USBD_DESC_LANG_DEFINE(echo_lang);
USBD_DESC_MANUFACTURER_DEFINE(echo_mfr, "codeplace");
USBD_DESC_PRODUCT_DEFINE(echo_product, "codeplace udp_echo");
USBD_DESC_CONFIG_DEFINE(echo_fs_cfg_desc, "FS Configuration");
USBD_CONFIGURATION_DEFINE(echo_fs_config, 0, 125, &echo_fs_cfg_desc);

int udp_echo_netif_start(void)
{
	int err;

	err = usbd_add_descriptor(&echo_usbd, &echo_lang);
	if (!err)
		err = usbd_add_descriptor(&echo_usbd, &echo_mfr);
	if (!err)
		err = usbd_add_descriptor(&echo_usbd, &echo_product);
	if (!err)
		err = usbd_add_configuration(&echo_usbd, USBD_SPEED_FS, &echo_fs_config);
	if (!err)
		err = usbd_register_all_classes(&echo_usbd, USBD_SPEED_FS, 1, NULL);
	if (err) {
		LOG_ERR("USB set-up failed (%d)", err);
		return err;
	}
	/* a single function: class information in the interface descriptors */
	usbd_device_set_code_triple(&echo_usbd, USBD_SPEED_FS, 0, 0, 0);
	err = usbd_init(&echo_usbd);
	if (!err)
		err = usbd_enable(&echo_usbd);
	if (err)
		LOG_ERR("USB start failed (%d)", err);
	return err;
}
