#include "bench/net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

static int resolve(const char *hostport, unsigned default_port, int socktype,
                   int passive, struct sockaddr_storage *addr, socklen_t *len,
                   cp_err *err)
{
    char host[256], port[16];
    const char *p = hostport, *colon;
    size_t hl;
    snprintf(port, sizeof port, "%u", default_port);
    if (!p || !*p)
        return cp_seterr(err, "no host given");
    if (*p == '[') {
        const char *end = strchr(p, ']');
        if (!end)
            return cp_seterr(err, "'%s': missing ']'", hostport);
        hl = (size_t)(end - p - 1);
        if (hl >= sizeof host)
            return cp_seterr(err, "'%s': host name too long", hostport);
        memcpy(host, p + 1, hl);
        host[hl] = 0;
        if (end[1] == ':')
            colon = end + 1;
        else if (end[1] == 0)
            colon = NULL;
        else
            return cp_seterr(err, "'%s': expected ':PORT' after ']'", hostport);
    } else {
        colon = strrchr(p, ':');
        if (colon && strchr(p, ':') != colon)
            colon = NULL; /* a bare IPv6 address */
        hl = colon ? (size_t)(colon - p) : strlen(p);
        if (hl >= sizeof host || hl == 0)
            return cp_seterr(err, "'%s': bad host name", hostport);
        memcpy(host, p, hl);
        host[hl] = 0;
    }
    if (colon) {
        char *end;
        unsigned long v = strtoul(colon + 1, &end, 10);
        if (!colon[1] || *end || (v == 0 && !passive) || v > 65535)
            return cp_seterr(err, "'%s': bad port '%s'", hostport, colon + 1);
        snprintf(port, sizeof port, "%lu", v);
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = socktype,
                             .ai_flags = passive ? AI_PASSIVE : 0};
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, port, &hints, &res);
    if (rc != 0 || !res)
        return cp_seterr(err, "cannot resolve '%s': %s", host,
                         gai_strerror(rc));
    memcpy(addr, res->ai_addr, res->ai_addrlen);
    *len = res->ai_addrlen;
    freeaddrinfo(res);
    return 0;
}

int nb_resolve(const char *hostport, unsigned default_port, int socktype,
               struct sockaddr_storage *addr, socklen_t *len, cp_err *err)
{
    return resolve(hostport, default_port, socktype, 0, addr, len, err);
}

int nb_resolve_listen(const char *hostport, unsigned default_port,
                      int socktype, struct sockaddr_storage *addr,
                      socklen_t *len, cp_err *err)
{
    return resolve(hostport, default_port, socktype, 1, addr, len, err);
}

const char *nb_addr_str(const struct sockaddr_storage *addr, char *buf,
                        size_t size)
{
    char h[INET6_ADDRSTRLEN] = "?";
    if (addr->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const struct sockaddr_in *)addr;
        inet_ntop(AF_INET, &a->sin_addr, h, sizeof h);
        snprintf(buf, size, "%s:%u", h, ntohs(a->sin_port));
    } else if (addr->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)addr;
        inet_ntop(AF_INET6, &a->sin6_addr, h, sizeof h);
        snprintf(buf, size, "[%s]:%u", h, ntohs(a->sin6_port));
    } else {
        snprintf(buf, size, "?");
    }
    return buf;
}

uint64_t nb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t nb_wait_until(uint64_t deadline, uint64_t spin_ns)
{
    uint64_t now = nb_now_ns();
    if (now < deadline && deadline - now > spin_ns) {
        uint64_t wake = deadline - spin_ns;
        struct timespec ts = {.tv_sec = (time_t)(wake / 1000000000ULL),
                              .tv_nsec = (long)(wake % 1000000000ULL)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
               EINTR)
            ;
        now = nb_now_ns();
    }
    while (now < deadline)
        now = nb_now_ns();
    return now;
}

void nb_tight_timers(void)
{
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}
