/* sig: the one way a long command stops cleanly. SIGINT (Ctrl-C), SIGTERM
 * (timeout, CI, systemd) and SIGHUP (a closed terminal) all set the same
 * flag; the command notices it, finishes what it writes and exits as after
 * Ctrl-C. A second stop signal ends the process at once (the default
 * action). */
#ifndef CP_SIG_H
#define CP_SIG_H

#include <signal.h>

/* The flag the handlers set (0 until a stop signal arrives). */
extern volatile sig_atomic_t cp_sig_stop;

/* Installs the handlers for SIGINT, SIGTERM and SIGHUP (and clears the
 * flag); the previous handlers are kept for cp_sig_restore. Calls nest:
 * only the outermost pair installs and restores. */
void cp_sig_catch(void);
void cp_sig_restore(void);
/* The number of the last stop signal received, or 0. */
int cp_sig_last(void);
/* "SIGINT", "SIGTERM", "SIGHUP" or "signal". */
const char *cp_sig_name(int sig);

#endif
