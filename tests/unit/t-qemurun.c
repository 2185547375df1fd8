/* trace/qemurun.c: the recorder's windows from a target or a machine,
 * and the supervision of a run (real processes: sh and sleep stand in
 * for QEMU, whose process handling is the same). */
#include "test.h"

#include <signal.h>
#include <sys/types.h>

#include "target/target.h"
#include "trace/qemurun.h"

static void windows_of_machine(void)
{
    trc_qemu_cfg c;
    memset(&c, 0, sizeof c);
    const trc_qemu_machine *m = trc_qemu_find_machine("mps2-an505");
    T_ASSERT(m != NULL);
    char tname[64] = "";
    T_EQ(trc_qemu_windows(&c, m, NULL, tname, sizeof tname), 0);
    T_STREQ(c.target, "mps2-an505");
    T_STREQ(c.cpu, "cortex-m33");
    T_EQ(c.ncached, 1);
    T_EQ(c.cached[0].base, 0x10000000);
    T_EQ(c.cached[0].size, 0x00400000);
    T_EQ(c.nnoalloc, 0);
    T_ASSERT(trc_qemu_find_machine("mps2-an999") == NULL);
}

static void windows_of_target(void)
{
    cp_err e;
    const tgt *t = tgt_load("rp2040", &e);
    T_ASSERT(t != NULL);
    const trc_qemu_machine *m = trc_qemu_find_machine("mps2-an385");
    T_ASSERT(m != NULL);
    trc_qemu_cfg c;
    char tname[64];
    /* a marker in the cached flash, in SRAM (moved there by a plan), and
     * in the uncached alias: only the last is outside */
    static const struct {
        uint32_t mark;
        int outside;
    } cases[] = {{0x10000100, 0}, {0x20000100, 0}, {0x12000100, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(&c, 0, sizeof c);
        c.mark = cases[i].mark;
        T_EQ(trc_qemu_windows(&c, m, t, tname, sizeof tname),
             cases[i].outside);
    }
    T_STREQ(c.target, tname);
    T_STREQ(c.cpu, "cortex-m0plus");
    T_EQ(c.ncached, 1);
    T_EQ(c.cached[0].base, 0x10000000);
    T_EQ(c.cached[0].size, 16u << 20);
    T_EQ(c.nnoalloc, 1);
    T_EQ(c.noalloc[0].base, 0x11000000);
}

static pid_t spawn(const char *script)
{
    char *argv[] = {"sh", "-c", (char *)script, NULL};
    pid_t pid = -1;
    cp_err e;
    if (trc_qemu_spawn(argv, 1, &pid, &e))
        return -1;
    return pid;
}

static void supervise_exit(void)
{
    volatile sig_atomic_t stop = 0;
    trc_qemu_watch w = {.qpid = spawn("exit 3"), .cpid = -1, .t0 = cp_now_s(),
                        .quiet_s = 10, .stop = &stop};
    T_ASSERT(w.qpid > 0);
    const char *why = "x";
    trc_qemu_end how;
    int st = -1;
    cp_err e;
    T_EQ(trc_qemu_supervise(&w, &why, &how, &st, &e), 0);
    T_ASSERT(why == NULL);
    T_EQ(how, TRC_QEMU_EXITED);
    T_EQ(st, 3);
}

static void supervise_timeout(void)
{
    volatile sig_atomic_t stop = 0;
    trc_qemu_watch w = {.qpid = spawn("sleep 30"), .cpid = -1,
                        .t0 = cp_now_s(), .timeout_s = 0.3, .quiet_s = 10,
                        .stop = &stop};
    T_ASSERT(w.qpid > 0);
    const char *why = NULL;
    trc_qemu_end how;
    int st;
    cp_err e;
    T_EQ(trc_qemu_supervise(&w, &why, &how, &st, &e), 0);
    double took = cp_now_s() - w.t0;
    T_STREQ(why, "time limit");
    T_ASSERT(took >= 0.3 && took < 5);
    T_EQ(trc_qemu_stop(w.qpid, 2.0, &how, &st), 0);
    T_EQ(how, TRC_QEMU_SIGNALLED);
    T_EQ(st, SIGTERM);
}

static void supervise_interrupted(void)
{
    volatile sig_atomic_t stop = 1;
    trc_qemu_watch w = {.qpid = spawn("sleep 30"), .cpid = -1,
                        .t0 = cp_now_s(), .quiet_s = 10, .stop = &stop};
    T_ASSERT(w.qpid > 0);
    const char *why = NULL;
    trc_qemu_end how;
    int st;
    cp_err e;
    T_EQ(trc_qemu_supervise(&w, &why, &how, &st, &e), 0);
    T_STREQ(why, "interrupted");
    T_EQ(trc_qemu_stop(w.qpid, 2.0, &how, &st), 0);
}

static void supervise_command_ended(void)
{
    volatile sig_atomic_t stop = 0;
    cp_err e;
    trc_qemu_watch w = {.qpid = spawn("sleep 30"), .t0 = cp_now_s(),
                        .quiet_s = 10, .stop = &stop};
    T_ASSERT(w.qpid > 0);
    T_EQ(trc_qemu_run_cmd("test \"$CODEPLACE_UDP_PORT\" = 4242 && exit 5",
                          4242, &w.cpid, &e), 0);
    const char *why = NULL;
    trc_qemu_end how;
    int st;
    T_EQ(trc_qemu_supervise(&w, &why, &how, &st, &e), 0);
    T_STREQ(why, "command ended");
    T_EQ(w.cpid, -1);
    T_ASSERT(WIFEXITED(w.cst) && WEXITSTATUS(w.cst) == 5);
    T_EQ(trc_qemu_stop(w.qpid, 2.0, &how, &st), 0);
}

static void end_cmd(void)
{
    cp_err e;
    pid_t pid;
    T_EQ(trc_qemu_run_cmd("sleep 30", 1, &pid, &e), 0);
    double t0 = cp_now_s();
    trc_qemu_end_cmd(pid);
    T_ASSERT(cp_now_s() - t0 < 5);
    T_ASSERT(kill(pid, 0) != 0); /* reaped: no such process */
}

static const t_case cases[] = {
    {"windows_of_machine", windows_of_machine},
    {"windows_of_target", windows_of_target},
    {"supervise_exit", supervise_exit},
    {"supervise_timeout", supervise_timeout},
    {"supervise_interrupted", supervise_interrupted},
    {"supervise_command_ended", supervise_command_ended},
    {"end_cmd", end_cmd},
    {NULL, NULL},
};
T_MAIN(cases)
