/*
 * Per-topic state: an open-addressed table (FNV-1a hash, linear probing)
 * of TOPICS_MAX topics with counters, extremes, a running sum and a
 * single-precision smoothed value; the subscriptions with MQTT wildcard
 * filters (MQTT 3.1.1 4.7.1: '+' matches one level, '#' the rest).
 */
#include "proto.h"

#include <string.h>

static uint32_t fnv1a(const uint8_t *p, size_t len)
{
    uint32_t h = 0x811c9dc5u;

    while (len--)
        h = (h ^ *p++) * 16777619u;
    return h;
}

void topics_init(struct topics *ts)
{
    memset(ts, 0, sizeof *ts);
}

struct topic *topic_find(struct topics *ts, const uint8_t *name, size_t len, int create)
{
    uint32_t h = fnv1a(name, len);
    unsigned k;

    if (len == 0 || len >= TOPIC_NAME)
        return NULL;
    for (k = 0; k < TOPICS_MAX; k++) {
        struct topic *t = &ts->t[(h + k) % TOPICS_MAX];
        if (!t->used) {
            if (!create || ts->ntopics >= TOPICS_MAX - 1)
                return NULL;
            memset(t, 0, sizeof *t);
            memcpy(t->name, name, len);
            t->name[len] = 0;
            t->hash = h;
            t->used = 1;
            t->min = INT32_MAX;
            t->max = INT32_MIN;
            ts->ntopics++;
            return t;
        }
        if (t->hash == h && strlen(t->name) == len && memcmp(t->name, name, len) == 0)
            return t;
    }
    return NULL;
}

int topic_match(const char *filter, const char *name)
{
    const char *f = filter, *n = name;

    /* MQTT 3.1.1 4.7.2: a wildcard first level does not match '$' topics */
    if ((*f == '+' || *f == '#') && *n == '$')
        return 0;
    for (;;) {
        if (*f == '#')
            return 1;                  /* the rest, whatever it is */
        if (*f == '+') {
            f++;
            while (*n && *n != '/')
                n++;
        } else {
            for (; *f && *f != '/'; f++, n++)
                if (*f != *n)
                    return 0;
        }
        if (*n && *n != '/')
            return 0;                  /* the name's level is longer */
        if (*f == 0)
            return *n == 0;
        if (*n == 0)                   /* "sport/#" matches "sport" */
            return f[1] == '#' && f[2] == 0;
        f++;
        n++;
    }
}

/* MQTT 3.1.1 4.7.1: '#' only as the last level, '+' a whole level */
static int filter_valid(const char *f)
{
    const char *p;

    if (!*f || strlen(f) >= TOPIC_NAME)
        return 0;
    for (p = f; *p; p++) {
        int starts = p == f || p[-1] == '/';
        int ends = p[1] == 0 || p[1] == '/';
        if (*p == '#' && !(starts && p[1] == 0))
            return 0;
        if (*p == '+' && !(starts && ends))
            return 0;
    }
    return 1;
}

int sub_add(struct topics *ts, const char *filter, unsigned qos)
{
    struct sub *free_slot = NULL;
    unsigned i;

    if (!filter_valid(filter))
        return -1;
    for (i = 0; i < SUBS_MAX; i++) {
        struct sub *s = &ts->s[i];
        if (s->used && strcmp(s->filter, filter) == 0) {
            s->qos = (uint8_t)qos;      /* MQTT 3.1.1 3.8.4: replaces */
            return (int)i;
        }
        if (!s->used && !free_slot)
            free_slot = s;
    }
    if (!free_slot)
        return -1;
    strcpy(free_slot->filter, filter);
    free_slot->qos = (uint8_t)qos;
    free_slot->used = 1;
    free_slot->hits = 0;
    return (int)(free_slot - ts->s);
}

int sub_remove(struct topics *ts, const char *filter)
{
    unsigned i;

    for (i = 0; i < SUBS_MAX; i++)
        if (ts->s[i].used && strcmp(ts->s[i].filter, filter) == 0) {
            ts->s[i].used = 0;
            return 0;
        }
    return -1;
}

void topic_update(struct topic *t, int32_t sixteenths, uint32_t seq, size_t bytes)
{
    float x = (float)sixteenths / 16.0f;

    t->count++;
    t->bytes += (uint32_t)bytes;
    t->last_seq = seq;
    if (sixteenths < t->min)
        t->min = sixteenths;
    if (sixteenths > t->max)
        t->max = sixteenths;
    t->sum_lo = (int32_t)((uint32_t)t->sum_lo + (uint32_t)sixteenths);
    t->ewma = t->count == 1 ? x : t->ewma + (x - t->ewma) * 0.25f;
    t->digest = (t->digest ^ (uint32_t)sixteenths) * 16777619u + seq;
}

uint32_t topics_digest(const struct topics *ts)
{
    uint32_t d = 0;
    unsigned i;

    for (i = 0; i < TOPICS_MAX; i++) {
        const struct topic *t = &ts->t[i];
        if (!t->used)
            continue;
        d = crc32_update(d, t->name, strlen(t->name));
        d ^= t->digest + t->count * 31u + t->bytes + (uint32_t)t->min + (uint32_t)t->max;
        /* the float state in sixteenths, truncated: the same on any IEEE
         * single-precision implementation */
        d = d * 16777619u + (uint32_t)(int32_t)(t->ewma * 16.0f);
    }
    for (i = 0; i < SUBS_MAX; i++)
        if (ts->s[i].used)
            d = crc32_update(d, ts->s[i].filter, strlen(ts->s[i].filter)) + ts->s[i].hits;
    return d;
}
