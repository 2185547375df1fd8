/*
 * The reader of the DIAG reply's JSON (RFC 8259), as the peer would run
 * it: a recursive-descent check of the structure (objects, arrays,
 * strings with escapes, numbers through strtod, true/false/null) that
 * returns a value depending on every number and member name, or 0 when
 * the text is not one JSON value.
 */
#include "proto.h"

#include <stdlib.h>
#include <string.h>

struct jr {
    const char *p, *end;
    uint32_t h;
    unsigned numbers, depth;
    int err;
};

static void ws(struct jr *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
        r->p++;
}

static int eat(struct jr *r, char ch)
{
    ws(r);
    if (r->p < r->end && *r->p == ch) {
        r->p++;
        return 1;
    }
    return 0;
}

static void value(struct jr *r);

static void string(struct jr *r)
{
    if (!eat(r, '"')) {
        r->err = 1;
        return;
    }
    while (r->p < r->end && *r->p != '"') {
        unsigned char ch = (unsigned char)*r->p++;
        if (ch < 0x20) {
            r->err = 1;
            return;
        }
        if (ch == '\\') {
            if (r->p >= r->end || !strchr("\"\\/bfnrtu", *r->p)) {
                r->err = 1;
                return;
            }
            if (*r->p == 'u') {
                if (r->end - r->p < 5 || strspn(r->p + 1, "0123456789abcdefABCDEF") < 4) {
                    r->err = 1;
                    return;
                }
                r->p += 4;
            }
            ch = (unsigned char)*r->p++;
        }
        r->h = (r->h ^ ch) * 16777619u;
    }
    if (!eat(r, '"'))
        r->err = 1;
}

static void number(struct jr *r)
{
    char buf[40], *end;
    size_t n = strspn(r->p, "+-0123456789.eE");
    double d;

    if (n == 0 || n >= sizeof buf || (size_t)(r->end - r->p) < n) {
        r->err = 1;
        return;
    }
    memcpy(buf, r->p, n);
    buf[n] = 0;
    d = strtod(buf, &end);
    if (*end) {
        r->err = 1;
        return;
    }
    r->p += n;
    r->numbers++;
    /* every number is a multiple of 1/16; the clock in
     * milliseconds needs 64 bits; anything beyond 2^50 is an error */
    if (d > 1125899906842624.0 || d < -1125899906842624.0) {
        r->err = 1;
        return;
    }
    r->h = (r->h ^ (uint32_t)(uint64_t)(int64_t)(d * 16.0)) * 16777619u;
}

static void members(struct jr *r, char close, int named)
{
    if (eat(r, close))
        return;
    do {
        if (named) {
            string(r);
            if (r->err || !eat(r, ':')) {
                r->err = 1;
                return;
            }
        }
        value(r);
    } while (!r->err && eat(r, ','));
    if (!r->err && !eat(r, close))
        r->err = 1;
}

static void value(struct jr *r)
{
    ws(r);
    if (r->p >= r->end || ++r->depth > 8) {
        r->err = 1;
        return;
    }
    switch (*r->p) {
    case '{':
        r->p++;
        members(r, '}', 1);
        break;
    case '[':
        r->p++;
        members(r, ']', 0);
        break;
    case '"':
        string(r);
        break;
    case 't':
    case 'f':
    case 'n': {
        const char *lit = *r->p == 't' ? "true" : *r->p == 'f' ? "false" : "null";
        size_t n = strlen(lit);
        if ((size_t)(r->end - r->p) < n || memcmp(r->p, lit, n))
            r->err = 1;
        else
            r->p += n;
        break;
    }
    default:
        number(r);
        break;
    }
    r->depth--;
}

uint32_t json_check(const char *text, size_t len, unsigned *numbers)
{
    struct jr r = { text, text + len, 0x811c9dc5u, 0, 0, 0 };

    value(&r);
    ws(&r);
    if (r.err || r.p != r.end)
        return 0;
    *numbers = r.numbers;
    return r.h ? r.h : 1;
}
