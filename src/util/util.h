/* util: error reporting, growable arrays, string pool, files, numbers.
 * Library code reports failures through cp_err and never prints. */
#ifndef CP_UTIL_H
#define CP_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* An error message filled by library functions that fail. */
typedef struct cp_err {
    char msg[512];
} cp_err;

/* Formats into err (when not NULL) and returns -1, so callers can write
 * `return cp_seterr(err, "...")`. */
int cp_seterr(cp_err *err, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Makes room for `need` elements of `elem` bytes in *p (capacity *cap).
 * Returns 0, or -1 when memory runs out (*p is left as it was). */
int cp_grow(void **p, size_t *cap, size_t need, size_t elem);

/* The demangled form of a C++ (Itanium ABI, "_Z...") name, malloc'ed; NULL
 * when name is not a mangled C++ name (C names stay as they are). */
char *cp_demangle(const char *name);

/* String pool: strings live until cp_pool_free. */
typedef struct cp_pool cp_pool;
cp_pool *cp_pool_new(void);
void cp_pool_free(cp_pool *pool);
/* Copies s (n bytes, or the whole string when n == (size_t)-1); NULL on OOM. */
const char *cp_pool_strn(cp_pool *pool, const char *s, size_t n);
const char *cp_pool_str(cp_pool *pool, const char *s);

/* Reads a whole file; *data is NUL-terminated and must be freed. */
int cp_read_file(const char *path, char **data, size_t *len, cp_err *err);

/* Seconds on CLOCK_MONOTONIC, for elapsed times and deadlines. */
double cp_now_s(void);

/* FNV-1a, 64 bit. Pass CP_FNV_INIT as the first h. */
#define CP_FNV_INIT 0xcbf29ce484222325ULL
uint64_t cp_fnv1a(uint64_t h, const void *data, size_t len);

/* A 32-bit hash of x (xor-shift-multiply, "lowbias32"), for open-addressing
 * tables keyed by an address or a cache line. */
static inline uint32_t cp_hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

/* n with a comma between each group of three digits ("1,234,567") into buf
 * (at least 32 bytes); returns buf. */
const char *cp_commas(char *buf, uint64_t n);

/* A frequency as an engineer reads it: sig significant digits (1..9) with
 * an SI prefix, zeros after the point dropped ("13.74 MHz", "1 kHz",
 * "200 Hz"), into buf (at least 32 bytes); returns buf. */
const char *cp_hz(char *buf, double hz, unsigned sig);

/* Parses an unsigned number: decimal, 0x hex, with an optional K/M/G suffix
 * (powers of 1024) when allow_suffix. Returns 0 or -1. */
int cp_parse_u64(const char *s, int allow_suffix, uint64_t *out);

/* Last path component. */
const char *cp_basename(const char *path);

/* Case-sensitive glob match with * and ? (used for name patterns). */
int cp_glob(const char *pat, const char *s);

#endif
