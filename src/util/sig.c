#include "util/sig.h"

#include <string.h>

volatile sig_atomic_t cp_sig_stop;
static volatile sig_atomic_t last_sig;
static int depth;

static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP};
#define NSIGS (sizeof stop_sigs / sizeof stop_sigs[0])
static struct sigaction saved[NSIGS];

static void on_stop(int sig)
{
    if (cp_sig_stop) {
        /* A second stop signal: the user does not want to wait. */
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    last_sig = sig;
    cp_sig_stop = 1;
}

void cp_sig_catch(void)
{
    if (depth++)
        return;
    cp_sig_stop = 0;
    last_sig = 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < NSIGS; i++)
        sigaction(stop_sigs[i], &sa, &saved[i]);
}

void cp_sig_restore(void)
{
    if (!depth || --depth)
        return;
    for (unsigned i = 0; i < NSIGS; i++)
        sigaction(stop_sigs[i], &saved[i], NULL);
}

int cp_sig_last(void)
{
    return last_sig;
}

const char *cp_sig_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
    }
}
