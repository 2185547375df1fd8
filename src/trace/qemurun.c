/* trc: running QEMU with the recorder plugin (see qemurun.h). */
#include "trace/qemurun.h"

#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A -plugin argument value: QEMU's option parser takes ",," for a comma. */
static int append(char **s, size_t *len, size_t *cap, const char *v, int esc)
{
    for (const char *p = v; *p; p++) {
        if (*len + 3 > *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            char *n = realloc(*s, nc);
            if (!n)
                return -1;
            *s = n;
            *cap = nc;
        }
        (*s)[(*len)++] = *p;
        if (esc && *p == ',')
            (*s)[(*len)++] = ',';
    }
    if (*len + 1 > *cap) {
        char *n = realloc(*s, *cap + 16);
        if (!n)
            return -1;
        *s = n;
        *cap += 16;
    }
    (*s)[*len] = 0;
    return 0;
}

static int kv(char **s, size_t *len, size_t *cap, const char *k,
              const char *v)
{
    return append(s, len, cap, ",", 0) || append(s, len, cap, k, 0) ||
           append(s, len, cap, "=", 0) || append(s, len, cap, v, 1);
}

char **trc_qemu_argv(const trc_qemu_cfg *c, cp_err *err)
{
    char **a = calloc(32, sizeof *a);
    char *pl = NULL;
    size_t len = 0, cap = 0;
    char b[64];
    int bad = 0;
    if (!a)
        goto oom;
    bad |= append(&pl, &len, &cap, c->plugin, 1);
    bad |= kv(&pl, &len, &cap, "out", c->out);
    snprintf(b, sizeof b, "0x%x", c->mark);
    bad |= kv(&pl, &len, &cap, "mark", b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)c->n);
    bad |= kv(&pl, &len, &cap, "marks", b);
    snprintf(b, sizeof b, "%llu", (unsigned long long)c->skip);
    bad |= kv(&pl, &len, &cap, "skip", b);
    for (unsigned i = 0; i < c->ncached; i++) {
        snprintf(b, sizeof b, "0x%x:0x%x", c->cached[i].base,
                 c->cached[i].size);
        bad |= kv(&pl, &len, &cap, "cached", b);
    }
    for (unsigned i = 0; i < c->nnoalloc; i++) {
        snprintf(b, sizeof b, "0x%x:0x%x", c->noalloc[i].base,
                 c->noalloc[i].size);
        bad |= kv(&pl, &len, &cap, "noalloc", b);
    }
    for (unsigned i = 0; i < c->nvec; i++) {
        snprintf(b, sizeof b, "%u:0x%x", c->vec[i].exc, c->vec[i].handler);
        bad |= kv(&pl, &len, &cap, "vec", b);
    }
    if (c->target && *c->target)
        bad |= kv(&pl, &len, &cap, "target", c->target);
    if (c->cpu && *c->cpu)
        bad |= kv(&pl, &len, &cap, "cpu", c->cpu);
    if (c->elf_hash && *c->elf_hash)
        bad |= kv(&pl, &len, &cap, "elf", c->elf_hash);
    if (c->endfile)
        bad |= kv(&pl, &len, &cap, "endfile", c->endfile);
    if (bad)
        goto oom;
    const char *fixed[] = {c->qemu, "-M", c->machine, "-display", "none",
                           "-monitor", "none", "-serial", "none",
                           "-semihosting-config", "enable=on,target=native",
                           "-kernel", c->elf, "-plugin", pl};
    size_t n = 0;
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (!(a[n++] = strdup(fixed[i])))
            goto oom;
    if (c->udp_guest) {
        char nic[256], g[16], h[16], m[16], nt[16];
        if (c->guest_ip)
            snprintf(nic, sizeof nic, "user,id=cpnet,model=lan9118,"
                     "net=%s/%s,host=%s,hostfwd=udp:127.0.0.1:%u-%s:%u",
                     trc_qemu_ipstr(c->guest_ip & c->guest_mask, nt),
                     trc_qemu_ipstr(c->guest_mask, m),
                     trc_qemu_ipstr(c->host_ip, h), c->udp_host,
                     trc_qemu_ipstr(c->guest_ip, g), c->udp_guest);
        else
            snprintf(nic, sizeof nic, "user,id=cpnet,model=lan9118,"
                     "hostfwd=udp:127.0.0.1:%u-:%u", c->udp_host,
                     c->udp_guest);
        if (!(a[n++] = strdup("-nic")) || !(a[n++] = strdup(nic)))
            goto oom;
        if (c->pcap) {
            /* QEMU's option parser takes ",," for a comma in a value */
            free(pl);
            pl = NULL;
            len = cap = 0;
            if (append(&pl, &len, &cap, "filter-dump,id=cpdump,netdev=cpnet,"
                       "maxlen=64,file=", 0) ||
                append(&pl, &len, &cap, c->pcap, 1) ||
                !(a[n++] = strdup("-object")) || !(a[n++] = strdup(pl)))
                goto oom;
        }
    }
    free(pl);
    return a;
oom:
    free(pl);
    trc_qemu_argv_free(a);
    cp_seterr(err, "out of memory");
    return NULL;
}

void trc_qemu_argv_free(char **argv)
{
    if (!argv)
        return;
    for (char **p = argv; *p; p++)
        free(*p);
    free(argv);
}

int trc_qemu_spawn(char *const *argv, int quiet, pid_t *pid, cp_err *err)
{
    int pfd[2];
    if (pipe2(pfd, O_CLOEXEC))
        return cp_seterr(err, "pipe: %s", strerror(errno));
    pid_t p = fork();
    if (p < 0) {
        close(pfd[0]);
        close(pfd[1]);
        return cp_seterr(err, "fork: %s", strerror(errno));
    }
    if (!p) {
        /* Its own process group: a Ctrl-C at the terminal reaches codeplace,
         * which then stops QEMU so that the plugin records why. */
        setpgid(0, 0);
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        int nul = open("/dev/null", O_RDWR);
        if (nul >= 0) {
            dup2(nul, 0);
            if (quiet)
                dup2(nul, 1);
            else
                dup2(2, 1);
        }
        execvp(argv[0], argv);
        int e = errno;
        if (write(pfd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(127);
    }
    close(pfd[1]);
    int e = 0;
    ssize_t r = read(pfd[0], &e, sizeof e);
    close(pfd[0]);
    if (r == (ssize_t)sizeof e) {
        waitpid(p, NULL, 0);
        return cp_seterr(err, "cannot run '%s': %s", argv[0], strerror(e));
    }
    *pid = p;
    return 0;
}

static void decode(int st, trc_qemu_end *how, int *status)
{
    if (WIFSIGNALED(st)) {
        *how = TRC_QEMU_SIGNALLED;
        *status = WTERMSIG(st);
    } else {
        *how = TRC_QEMU_EXITED;
        *status = WEXITSTATUS(st);
    }
}

/* Reaps PID within LIMIT_S seconds (0: no limit) or until *STOP: 0 when
 * it ended (HOW, STATUS set), 1 when it did not, -1 when waitpid failed. */
static int reap(pid_t pid, double limit_s, volatile sig_atomic_t *stop,
                trc_qemu_end *how, int *status)
{
    double t0 = cp_now_s();
    for (;;) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            decode(st, how, status);
            return 0;
        }
        if (r < 0 && errno != EINTR)
            return -1;
        if ((stop && *stop) || (limit_s > 0 && cp_now_s() - t0 >= limit_s))
            return 1;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int trc_qemu_wait(pid_t pid, double deadline_s, volatile sig_atomic_t *stop,
                  trc_qemu_end *how, int *status, cp_err *err)
{
    int r = reap(pid, deadline_s, stop, how, status);
    if (r < 0)
        return cp_seterr(err, "waitpid: %s", strerror(errno));
    return r;
}

int trc_qemu_stop(pid_t pid, double grace_s, trc_qemu_end *how, int *status)
{
    kill(pid, SIGTERM);
    /* a grace of 0 would mean "no limit" to reap: keep a moment */
    int r = reap(pid, grace_s > 0 ? grace_s : 0.001, NULL, how, status);
    if (r <= 0)
        return r;
    kill(pid, SIGKILL);
    int st;
    if (waitpid(pid, &st, 0) == pid)
        decode(st, how, status);
    return 1;
}

static int exists(const char *p)
{
    struct stat st;
    return !stat(p, &st) && S_ISREG(st.st_mode);
}

int trc_qemu_find_plugin(char *buf, size_t cap, cp_err *err)
{
    const char *env = getenv("CODEPLACE_QEMU_PLUGIN");
    if (env && *env) {
        if (!exists(env))
            return cp_seterr(err, "CODEPLACE_QEMU_PLUGIN: no such file '%s'",
                             env);
        snprintf(buf, cap, "%s", env);
        return 0;
    }
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return cp_seterr(err, "cannot find the running binary: %s",
                         strerror(errno));
    exe[n] = 0;
    char *sl = strrchr(exe, '/');
    if (!sl)
        return cp_seterr(err, "cannot find the running binary");
    *sl = 0;
    const char *rel[] = {"/codeplace-qemu.so", "/../codeplace-qemu.so",
                         "/../lib/codeplace/codeplace-qemu.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        snprintf(buf, cap, "%s%s", exe, rel[i]);
        if (exists(buf)) {
            char *rp = realpath(buf, NULL);
            if (rp) {
                snprintf(buf, cap, "%s", rp);
                free(rp);
            }
            return 0;
        }
    }
    return cp_seterr(err, "no codeplace-qemu.so next to %s or in "
                     "%s/../lib/codeplace (make plugin, or set "
                     "CODEPLACE_QEMU_PLUGIN)", exe, exe);
}

int trc_qemu_free_udp_port(unsigned *port, cp_err *err)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cp_seterr(err, "socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t l = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) ||
        getsockname(fd, (struct sockaddr *)&a, &l)) {
        int e = errno;
        close(fd);
        return cp_seterr(err, "cannot find a free UDP port: %s", strerror(e));
    }
    *port = ntohs(a.sin_port);
    close(fd);
    return 0;
}

/* ---- QEMU's Cortex-M machines ---- */

static const trc_qemu_machine machines[] = {
    /* MPS2 AN385 / AN500: ZBT SSRAM1, 4 MiB at 0x00000000 (QEMU
     * hw/arm/mps2.c, mps2_common_init(); ARM AN385 3.2 "Memory map") */
    {"mps2-an385", "cortex-m3", 0x00000000, 0x00400000},
    {"mps2-an386", "cortex-m4", 0x00000000, 0x00400000},
    {"mps2-an500", "cortex-m7", 0x00000000, 0x00400000},
    /* MPS2 AN505: SSRAM1 4 MiB, secure alias at 0x10000000 (QEMU
     * hw/arm/mps2-tz.c; ARM AN505 4.2 "Memory map") */
    {"mps2-an505", "cortex-m33", 0x10000000, 0x00400000},
    /* micro:bit (nRF51822): flash 256 KiB at 0x00000000 (QEMU
     * include/hw/arm/nrf51.h, NRF51_FLASH_BASE; nRF51822 PS 3.0 table 8) */
    {"microbit", "cortex-m0", 0x00000000, 0x00040000},
};

const trc_qemu_machine *trc_qemu_find_machine(const char *name)
{
    for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
        if (!strcmp(machines[i].name, name))
            return &machines[i];
    return NULL;
}

const char *trc_qemu_machine_names(void)
{
    return "mps2-an385, mps2-an386, mps2-an500, mps2-an505, microbit";
}

int trc_qemu_windows(trc_qemu_cfg *c, const trc_qemu_machine *m,
                     const tgt *t, char *tname, size_t cap)
{
    if (!t) {
        c->target = m->name;
        c->cpu = m->cpu;
        c->cached[0].base = m->code_base;
        c->cached[0].size = m->code_size;
        c->ncached = 1;
        return 0;
    }
    tgt_header_name(t, tname, cap);
    c->target = tname;
    c->cpu = t->cpu;
    for (unsigned i = 0; i < t->nmems; i++) {
        const tgt_mem *mm = &t->mems[i];
        trc_qemu_win *w = NULL;
        if (mm->kind == TGT_MEM_FLASH && c->ncached < TRC_QEMU_MAX_WIN)
            w = &c->cached[c->ncached++];
        else if (mm->kind == TGT_MEM_FLASH_NOALLOC &&
                 c->nnoalloc < TRC_QEMU_MAX_WIN)
            w = &c->noalloc[c->nnoalloc++];
        if (w) {
            w->base = mm->base;
            w->size = mm->size;
        }
    }
    /* A marker in RAM is one a plan moved there; anywhere else outside
     * the cached window the image was linked for another memory map. */
    const tgt_mem *mk = tgt_mem_at(t, c->mark);
    int in_ram = mk && (mk->kind == TGT_MEM_SRAM ||
                        mk->kind == TGT_MEM_ITCM || mk->kind == TGT_MEM_DTCM);
    return !tgt_is_cached(t, c->mark) && !in_ram;
}

int trc_qemu_vectors(const img *im, trc_qemu_cfg *c, uint32_t *vt,
                     cp_err *err)
{
    if (emu_find_vectors(im, vt, err))
        return -1;
    emu_vec v[TRC_QEMU_MAX_VEC];
    size_t n = emu_vector_handlers(im, *vt, 2, 16 + TRC_QEMU_MAX_VEC, v,
                                   TRC_QEMU_MAX_VEC);
    for (size_t i = 0; i < n; i++) {
        c->vec[i].exc = v[i].exc;
        c->vec[i].handler = v[i].handler;
    }
    c->nvec = (unsigned)n;
    return 0;
}

/* ---- the guest's address ---- */

const char *trc_qemu_ipstr(uint32_t ip, char *buf)
{
    snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 255,
             (ip >> 8) & 255, ip & 255);
    return buf;
}

static int parse_ip(const char *s, uint32_t *ip)
{
    unsigned a, b, c, d;
    char tail;
    if (sscanf(s, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) != 4 || a > 255 ||
        b > 255 || c > 255 || d > 255)
        return -1;
    *ip = a << 24 | b << 16 | c << 8 | d;
    return 0;
}

/* The quoted value of KEY="..." in a Kconfig .config line; NULL when the
 * line sets another key. */
static const char *config_str(char *line, const char *key)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) || line[k] != '=' || line[k + 1] != '"')
        return NULL;
    char *v = line + k + 2, *q = strchr(v, '"');
    if (q)
        *q = 0;
    return v;
}

int trc_qemu_zephyr_addr(const char *elf, uint32_t *ip, uint32_t *mask,
                         uint32_t *host, char *from, size_t cap, cp_err *err)
{
    const char *sl = strrchr(elf, '/');
    snprintf(from, cap, "%.*s.config", sl ? (int)(sl - elf + 1) : 0, elf);
    FILE *f = fopen(from, "r");
    if (!f)
        return 0;
    char line[512], my[64] = "", nm[64] = "", peer[64] = "";
    int dhcp = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = 0;
        const char *v;
        if ((v = config_str(line, "CONFIG_NET_CONFIG_MY_IPV4_ADDR")))
            snprintf(my, sizeof my, "%s", v);
        else if ((v = config_str(line, "CONFIG_NET_CONFIG_MY_IPV4_NETMASK")))
            snprintf(nm, sizeof nm, "%s", v);
        else if ((v = config_str(line, "CONFIG_NET_CONFIG_PEER_IPV4_ADDR")))
            snprintf(peer, sizeof peer, "%s", v);
        else if (!strcmp(line, "CONFIG_NET_DHCPV4=y"))
            dhcp = 1;
    }
    fclose(f);
    if (!my[0] || dhcp)
        return 0;
    if (parse_ip(my, ip))
        return cp_seterr(err, "%s: CONFIG_NET_CONFIG_MY_IPV4_ADDR \"%s\" is "
                         "not an IPv4 address", from, my);
    if (!nm[0] || parse_ip(nm, mask))
        *mask = 0xffffff00u;
    /* QEMU's user network wants room for its host, DNS (.3) and DHCP
     * (.15) addresses: a /24 or wider */
    if (*mask > 0xffffff00u || (~*mask & (~*mask + 1)))
        *mask = 0xffffff00u;
    uint32_t net = *ip & *mask, p;
    if (!parse_ip(peer, &p) && (p & *mask) == net && p != *ip &&
        (p & ~*mask) != (3 & ~*mask))
        *host = p;
    else
        *host = net | ((*ip & ~*mask) == 2 ? 1 : 2);
    if ((*ip & ~*mask) == 0 || (*ip | *mask) == 0xffffffffu ||
        (*ip & ~*mask) == 3)
        return cp_seterr(err, "%s: the guest's address %s cannot be used on "
                         "QEMU's user network (network, broadcast or its "
                         "DNS address .3)", from, my);
    return 1;
}

/* ---- readiness ---- */

void trc_qemu_fill(uint8_t *b, size_t n, uint64_t seq)
{
    memcpy(b, "CPQE", 4);
    for (int i = 0; i < 8; i++)
        b[4 + i] = (uint8_t)(seq >> (8 * i));
    for (size_t i = 12; i < n; i++)
        b[i] = (uint8_t)(seq * 31 + i);
}

/* The frames QEMU dumped since *off (a pcap file: 24-byte header, then
 * 16-byte record headers and up to 64 bytes of each frame). Notes the
 * guest's frames; 1 when one of them is an ARP reply from guest_ip. */
static int read_dump(FILE *f, long *off, uint32_t guest_ip,
                     trc_qemu_await_res *r)
{
    int arp = 0;
    if (!*off)
        *off = 24;
    for (;;) {
        uint8_t h[16], fr[64];
        if (fseek(f, *off, SEEK_SET) || fread(h, 1, 16, f) != 16)
            break;
        uint32_t incl = h[8] | h[9] << 8 | h[10] << 16 | (uint32_t)h[11] << 24;
        if (incl > sizeof fr) /* not a dump this code wrote for */
            break;
        if (fread(fr, 1, incl, f) != incl)
            break;
        *off += 16 + (long)incl;
        /* QEMU's user network speaks from 52:55:xx (libslirp's
         * special_ethaddr); anything else is the guest */
        if (incl < 14 || (fr[6] == 0x52 && fr[7] == 0x55))
            continue;
        r->guest_frames++;
        unsigned type = fr[12] << 8 | fr[13];
        uint32_t src = 0;
        if (type == 0x0806 && incl >= 42) {
            src = (uint32_t)fr[28] << 24 | fr[29] << 16 | fr[30] << 8 | fr[31];
            if ((fr[20] << 8 | fr[21]) == 2 && src == guest_ip)
                arp = 1;
        } else if (type == 0x0800 && incl >= 34) {
            src = (uint32_t)fr[26] << 24 | fr[27] << 16 | fr[28] << 8 | fr[29];
        }
        if (src)
            r->guest_src = src;
    }
    clearerr(f);
    return arp;
}

/* Until the guest answers ARP, QEMU's user network (libslirp) holds a
 * frame for it, sends one ARP request for the first frame held, and drops
 * that frame when no reply comes within 1 s; frames behind it wait, then
 * go all at once when the guest answers (measured on QEMU 7.2: 27 probes
 * sent every 0.1 s while Zephyr booted reached it in the same
 * millisecond). A probe every 1.5 s is never behind another. */
#define ARP_SPACING_S 1.5

int trc_qemu_await(int fd, const char *pcap, uint32_t guest_ip, pid_t qpid,
                   size_t size, double limit_s, volatile sig_atomic_t *stop,
                   trc_qemu_await_res *res, cp_err *err)
{
    uint8_t probe[2048];
    if (size > sizeof probe)
        size = sizeof probe;
    trc_qemu_fill(probe, size, TRC_QEMU_PROBE_SEQ);
    memset(res, 0, sizeof *res);
    res->arp_s = -1;
    double t0 = cp_now_s(), next = 0, wait = 0.25;
    FILE *dump = NULL;
    long off = 0;
    int rc;
    for (;;) {
        double now = cp_now_s() - t0;
        if (limit_s > 0 && now >= limit_s) {
            rc = TRC_QEMU_NO_ANSWER;
            break;
        }
        if (stop && *stop) {
            rc = TRC_QEMU_HALTED;
            break;
        }
        int st;
        if (waitpid(qpid, &st, WNOHANG | WNOWAIT) == qpid) {
            rc = TRC_QEMU_GONE;
            break;
        }
        /* The dump exists once QEMU's user network and its forward are
         * up: the first probe goes then, and waits in QEMU for the
         * guest's ARP reply. */
        if (!dump)
            dump = fopen(pcap, "rb");
        /* no dump after 5 s (a QEMU without filter-dump): probe blind,
         * at the same spacing */
        int blind = !dump && now > 5;
        if (dump && res->arp_s < 0 && read_dump(dump, &off, guest_ip, res)) {
            res->arp_s = now;
            next = now + wait; /* the first probe's turn to be answered */
        } else if (dump && res->arp_s >= 0) {
            read_dump(dump, &off, guest_ip, res);
        }
        if ((dump || blind) && (!res->probes || now >= next)) {
            if (send(fd, probe, size, 0) == (ssize_t)size) {
                res->probes++;
                if (res->arp_s >= 0) {
                    next = now + wait;
                    wait = wait * 2 > 2 ? 2 : wait * 2;
                } else {
                    next = now + ARP_SPACING_S;
                }
            } else if (errno != ECONNREFUSED && errno != EINTR) {
                rc = cp_seterr(err, "send: %s", strerror(errno));
                break;
            }
        }
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 20) == 1) {
            uint8_t b[2048];
            if (recv(fd, b, sizeof b, 0) > 0) {
                res->ready_s = cp_now_s() - t0;
                rc = TRC_QEMU_READY;
                break;
            }
        }
    }
    if (dump)
        fclose(dump);
    return rc;
}

/* ---- traffic ---- */

static void *traffic_main(void *arg)
{
    trc_qemu_traffic *t = arg;
    uint8_t req[2048], rep[2049], want[2048];
    double period = 1.0 / t->rate, next = cp_now_s(), sent_at = 0;
    uint64_t seq = 0;
    while (!t->stop) {
        double now = cp_now_s();
        pthread_mutex_lock(&t->lock);
        int busy = t->inflight;
        if (busy && now - sent_at > t->timeout_s) {
            t->inflight = busy = 0; /* given up */
            t->unanswered++;
        }
        pthread_mutex_unlock(&t->lock);
        if (!busy && now >= next) {
            trc_qemu_fill(req, t->size, seq);
            if (send(t->fd, req, t->size, 0) == (ssize_t)t->size) {
                pthread_mutex_lock(&t->lock);
                t->sent++;
                t->inflight = 1;
                pthread_mutex_unlock(&t->lock);
                sent_at = now;
                seq++;
            }
            next += period;
            if (next < now) /* never catch up after a wait */
                next = now;
            continue;
        }
        struct pollfd p = {t->fd, POLLIN, 0};
        if (poll(&p, 1, 5) != 1)
            continue;
        ssize_t r = recv(t->fd, rep, sizeof rep, 0);
        if (r < 12)
            continue;
        uint64_t rs = 0;
        for (int i = 0; i < 8; i++)
            rs |= (uint64_t)rep[4 + i] << (8 * i);
        if (rs == TRC_QEMU_PROBE_SEQ)
            continue; /* a late answer to a probe */
        trc_qemu_fill(want, t->size, rs);
        int echo = (size_t)r == t->size && rs < seq &&
                   !memcmp(rep, want, t->size);
        pthread_mutex_lock(&t->lock);
        if (echo && t->inflight && rs == seq - 1) {
            t->answered++;
            t->inflight = 0;
            t->last_answer_s = cp_now_s();
        } else if (!echo) {
            t->wrong++;
        } /* else the late answer to a request given up: unanswered */
        pthread_mutex_unlock(&t->lock);
    }
    return NULL;
}

int trc_qemu_traffic_start(trc_qemu_traffic *t, int fd, double rate,
                           size_t size, cp_err *err)
{
    if (size < 12 || size > 2048)
        return cp_seterr(err, "request size %zu is not in 12..2048", size);
    t->fd = fd;
    t->rate = rate;
    t->size = size;
    if (!(t->timeout_s > 0))
        t->timeout_s = 2.0;
    t->last_answer_s = cp_now_s();
    if (pthread_create(&t->th, NULL, traffic_main, t))
        return cp_seterr(err, "cannot start the traffic thread");
    t->running = 1;
    return 0;
}

void trc_qemu_traffic_stop(trc_qemu_traffic *t)
{
    if (t->running) {
        t->stop = 1;
        pthread_join(t->th, NULL);
        t->running = 0;
    }
}

double trc_qemu_traffic_quiet_s(trc_qemu_traffic *t)
{
    pthread_mutex_lock(&t->lock);
    double last = t->last_answer_s;
    pthread_mutex_unlock(&t->lock);
    return cp_now_s() - last;
}

int trc_qemu_udp_socket(unsigned port, cp_err *err)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return cp_seterr(err, "socket: %s", strerror(errno));
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&a, sizeof a)) {
        int e = errno;
        close(fd);
        return cp_seterr(err, "connect: %s", strerror(e));
    }
    return fd;
}

/* ---- around the run ---- */

int trc_qemu_run_cmd(const char *cmd, unsigned port, pid_t *pid, cp_err *err)
{
    pid_t p = fork();
    if (p < 0)
        return cp_seterr(err, "fork: %s", strerror(errno));
    if (!p) {
        setpgid(0, 0);
        char b[16];
        snprintf(b, sizeof b, "%u", port);
        setenv("CODEPLACE_UDP_HOST", "127.0.0.1", 1);
        setenv("CODEPLACE_UDP_PORT", b, 1);
        signal(SIGINT, SIG_DFL);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    /* The group exists when this returns, so that trc_qemu_end_cmd's
     * signal to it cannot come before the child's own setpgid. */
    setpgid(p, p);
    *pid = p;
    return 0;
}

int trc_qemu_supervise(trc_qemu_watch *w, const char **why,
                       trc_qemu_end *how, int *status, cp_err *err)
{
    *why = NULL;
    for (;;) {
        double left = 0.2;
        if (w->timeout_s > 0) {
            left = w->timeout_s - (cp_now_s() - w->t0);
            if (left <= 0) {
                *why = "time limit";
                return 0;
            }
            if (left > 0.2)
                left = 0.2;
        }
        int r = trc_qemu_wait(w->qpid, left, w->stop, how, status, err);
        if (r < 0) {
            *why = "stopped";
            return -1;
        }
        if (r == 0)
            return 0;
        if (*w->stop)
            *why = "interrupted";
        else if (w->tr && w->tr->running &&
                 trc_qemu_traffic_quiet_s(w->tr) > w->quiet_s)
            *why = "no answers";
        else if (w->cpid > 0 && waitpid(w->cpid, &w->cst, WNOHANG) ==
                 w->cpid) {
            w->cpid = -1;
            *why = "command ended";
        }
        if (*why)
            return 0;
    }
}

void trc_qemu_end_cmd(pid_t pid)
{
    kill(-pid, SIGTERM);
    waitpid(pid, NULL, 0);
}

void trc_qemu_leave_reason(const char *path, const char *why)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", why);
        fclose(f);
    }
}

int trc_qemu_summary(const char *path, trc_qemu_sum *s, cp_err *err)
{
    memset(s, 0, sizeof *s);
    trc_reader *r = trc_open_ex(path, TRC_OPEN_PARTIAL | TRC_OPEN_CONTEXT, err);
    if (!r)
        return -1;
    trc_rec rec;
    int rc, in = 0;
    uint64_t cur = 0;
    while ((rc = trc_next(r, &rec, err)) == 1) {
        if (rec.kind == TRC_MARK) {
            if (in && !cp_grow((void **)&s->iters, &s->cap, s->nit + 1,
                               sizeof *s->iters))
                s->iters[s->nit++] = cur;
            in = 1;
            cur = 0;
        } else if (rec.kind == TRC_FETCH) {
            *(in ? &cur : &s->pre) += rec.ninsn;
            if (rec.flags & TRC_F_UNCACHED)
                s->uncached += rec.ninsn;
        }
    }
    if (rc == 0) {
        const trc_totals *t = trc_get_totals(r);
        s->truncated = trc_truncated(r);
        snprintf(s->end, sizeof s->end, "%s",
                 s->truncated ? "truncated" : t->end);
        if (in && !strcmp(s->end, "done") &&
            !cp_grow((void **)&s->iters, &s->cap, s->nit + 1,
                     sizeof *s->iters))
            s->iters[s->nit++] = cur;
        s->insns = t->insns;
        s->runs = t->fetch_runs;
        s->dreads = t->dreads;
        s->ctxs = t->contexts;
        s->marks = t->marks;
        s->bytes = trc_offset(r);
        trc_spread sp = trc_spread_of(s->iters, s->nit);
        s->median = sp.median;
        s->min = sp.min;
        s->max = sp.max;
    }
    trc_close(r);
    return rc;
}

void trc_qemu_sum_free(trc_qemu_sum *s)
{
    free(s->iters);
    s->iters = NULL;
    s->nit = s->cap = 0;
}
