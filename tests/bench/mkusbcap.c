/* mkusbcap: writes a usbmon capture of a simulated USB network device
 * answering echoes (tests/bench/usbcap.h has the timings), for the CLI
 * tests of `codeplace bench usbmon`.
 *   mkusbcap OUT [--dlt 189|220] [--ncm] [--icmp] [--swap] [--text]
 *            [--n N] [--lose K]
 * Prints the number of echoes answered. */
#include "usbcap.h"

int main(int argc, char **argv)
{
    uc_opts op = {.dlt = 220, .n = 20};
    int swap = 0, text = 0;
    if (argc < 2) {
        fprintf(stderr, "usage: mkusbcap OUT [--dlt N] [--ncm] [--icmp] "
                "[--swap] [--text] [--n N] [--lose K]\n");
        return 2;
    }
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--dlt") && i + 1 < argc)
            op.dlt = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ncm"))
            op.ncm = 1;
        else if (!strcmp(argv[i], "--icmp"))
            op.icmp = 1;
        else if (!strcmp(argv[i], "--swap"))
            swap = 1;
        else if (!strcmp(argv[i], "--text"))
            text = 1;
        else if (!strcmp(argv[i], "--n") && i + 1 < argc)
            op.n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--lose") && i + 1 < argc)
            op.lose = atoi(argv[++i]);
        else {
            fprintf(stderr, "mkusbcap: bad argument '%s'\n", argv[i]);
            return 2;
        }
    }
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.host", argv[1]);
    int a = uc_write(swap ? tmp : argv[1], &op, text);
    if (a < 0 || (swap && uc_swap_file(tmp, argv[1]) < 0)) {
        fprintf(stderr, "mkusbcap: cannot write '%s'\n", argv[1]);
        return 1;
    }
    if (swap)
        remove(tmp);
    printf("%d\n", a);
    return 0;
}
