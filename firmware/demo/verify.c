/*
 * Checks of the outgoing report, as a sender would do before handing it to
 * the network: a small JSON structure checker, a field lookup with strstr,
 * and a base64 encoding of the report's binary trailer.
 */
#include "demo.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Returns the number of values in a JSON text, or -1 when it is not
 * well-formed (brackets, strings, escapes, numbers, literals). */
int demo_json_check(const char *s, size_t len)
{
    char stack[16];
    int depth = 0, values = 0;
    size_t i = 0;

    while (i < len) {
        char c = s[i];
        if (c == '{' || c == '[') {
            if (depth == (int)sizeof stack)
                return -1;
            stack[depth++] = c;
            i++;
        } else if (c == '}' || c == ']') {
            if (depth == 0 || stack[depth - 1] != (c == '}' ? '{' : '['))
                return -1;
            depth--;
            values++;
            i++;
        } else if (c == '"') {
            for (i++; i < len && s[i] != '"'; i++) {
                if (s[i] == '\\')
                    i++;
                else if ((unsigned char)s[i] < 0x20)
                    return -1;
            }
            if (i >= len)
                return -1;
            i++;
            values++;
        } else if (c == '-' || isdigit((unsigned char)c)) {
            i++;
            while (i < len && (isdigit((unsigned char)s[i]) || s[i] == '.'
                               || s[i] == 'e' || s[i] == 'E' || s[i] == '+'
                               || s[i] == '-'))
                i++;
            values++;
        } else if (c == ',' || c == ':' || isspace((unsigned char)c)) {
            i++;
        } else if (len - i >= 4 && (memcmp(s + i, "true", 4) == 0
                                    || memcmp(s + i, "null", 4) == 0)) {
            i += 4;
            values++;
        } else if (len - i >= 5 && memcmp(s + i, "false", 5) == 0) {
            i += 5;
            values++;
        } else {
            return -1;
        }
    }
    return depth == 0 ? values : -1;
}

/* The integer value of "key": in a JSON text, or def when absent. */
long demo_json_long(const char *s, const char *key, long def)
{
    char pat[24];
    const char *p;
    size_t k = strlen(key);

    if (k + 4 > sizeof pat)
        return def;
    pat[0] = '"';
    memcpy(pat + 1, key, k);
    memcpy(pat + 1 + k, "\":", 3);
    p = strstr(s, pat);
    if (!p)
        return def;
    return atol(p + k + 3);
}

size_t demo_base64(char *out, size_t outlen, const unsigned char *in, size_t n)
{
    static const char abc[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    size_t i, o = 0;

    for (i = 0; i < n && o + 5 <= outlen; i += 3) {
        uint32_t v = (uint32_t)in[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)in[i + 1] << 8;
        if (i + 2 < n)
            v |= in[i + 2];
        out[o++] = abc[(v >> 18) & 63u];
        out[o++] = abc[(v >> 12) & 63u];
        out[o++] = i + 1 < n ? abc[(v >> 6) & 63u] : '=';
        out[o++] = i + 2 < n ? abc[v & 63u] : '=';
    }
    if (outlen)
        out[o < outlen ? o : outlen - 1] = '\0';
    return o;
}
