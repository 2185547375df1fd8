/* jw: a small streaming JSON writer. Commas and nesting are tracked here;
 * callers emit keys and values in order. Write errors stick in jw.err. */
#ifndef CP_JW_H
#define CP_JW_H

#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

typedef struct jw {
    FILE *f;
    int pretty;
    int depth;
    int err;                     /* set when nesting goes wrong */
    unsigned char count[JW_MAX_DEPTH]; /* 0: nothing yet in this level */
    int after_key;
} jw;

void jw_init(jw *w, FILE *f, int pretty);
void jw_obj_begin(jw *w);
void jw_obj_end(jw *w);
void jw_arr_begin(jw *w);
void jw_arr_end(jw *w);
void jw_key(jw *w, const char *key);
void jw_str(jw *w, const char *s); /* NULL writes null */
void jw_int(jw *w, int64_t v);
void jw_uint(jw *w, uint64_t v);
void jw_double(jw *w, double v);   /* non-finite values write null */
void jw_bool(jw *w, int v);
void jw_null(jw *w);
/* Ends the document with a newline; returns 0 or -1 on a nesting error. */
int jw_finish(jw *w);

/* Writes s as a JSON string (with quotes) to f. */
void jw_write_escaped(FILE *f, const char *s);

#endif
