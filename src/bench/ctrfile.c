/* Reads counters JSON back (see ctrfile.h). */
#include "bench/ctrfile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/sweepfile.h"

int nb_ctr_is_counters(const char *text)
{
    return text && strstr(text, "\"kind\": \"codeplace counters 1\"") != NULL;
}

/* The string value of "key": "..." (no escapes expected in labels). */
static void str_field(const char *text, const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": \"", key);
    const char *p = strstr(text, pat);
    out[0] = 0;
    if (!p)
        return;
    p += strlen(pat);
    size_t k = 0;
    while (p[k] && p[k] != '"' && k + 1 < cap)
        k++;
    memcpy(out, p, k);
    out[k] = 0;
}

int nb_ctr_parse(const char *text, const char *name, nb_ctr_file *out,
                 cp_err *err)
{
    memset(out, 0, sizeof *out);
    if (!nb_ctr_is_counters(text))
        return cp_seterr(err, "'%s' is not the JSON of codeplace counters",
                         name);
    str_field(text, "label", out->label, sizeof out->label);
    if (nb_extract_figure(text, "misses_per_echo", &out->misses_per_echo) < 0 &&
        nb_extract_figure(text, "misses_per_event", &out->misses_per_echo) < 0)
        return cp_seterr(err, "'%s' has no misses per echo (a counter "
                         "saturated, or the run had no --ping/--events)",
                         name);
    if (nb_extract_figure(text, "echo_rate_hz", &out->echo_rate_hz) < 0)
        out->echo_rate_hz = NAN;
    return 0;
}
