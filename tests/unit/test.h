/* A small table-driven unit test runner. Each tests/unit/t-*.c defines test
 * functions and a table, and ends with T_MAIN(table). The binary prints
 * "ok NAME" or "FAIL NAME: why" per case and a closing count line that
 * tests/run adds up. */
#ifndef CP_TEST_H
#define CP_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct t_case {
    const char *name;
    void (*fn)(void);
} t_case;

extern int t_failed_now;
int t_failed_now;

#define T_FAIL(...)                                                         \
    do {                                                                    \
        printf("#   %s:%d: ", __FILE__, __LINE__);                         \
        printf(__VA_ARGS__);                                                \
        printf("\n");                                                       \
        t_failed_now = 1;                                                   \
    } while (0)

#define T_ASSERT(c)                                                         \
    do {                                                                    \
        if (!(c)) {                                                         \
            T_FAIL("assertion failed: %s", #c);                             \
            return;                                                         \
        }                                                                   \
    } while (0)

#define T_EQ(a, b)                                                          \
    do {                                                                    \
        long long t_a_ = (long long)(a), t_b_ = (long long)(b);             \
        if (t_a_ != t_b_) {                                                 \
            T_FAIL("%s == %s: %lld != %lld", #a, #b, t_a_, t_b_);           \
            return;                                                         \
        }                                                                   \
    } while (0)

#define T_STREQ(a, b)                                                       \
    do {                                                                    \
        const char *t_a_ = (a), *t_b_ = (b);                                \
        if (!t_a_ || !t_b_ || strcmp(t_a_, t_b_)) {                         \
            T_FAIL("%s == %s: '%s' != '%s'", #a, #b, t_a_ ? t_a_ : "(null)", \
                   t_b_ ? t_b_ : "(null)");                                 \
            return;                                                         \
        }                                                                   \
    } while (0)

static inline int t_run(const t_case *cases, int argc, char **argv)
{
    int pass = 0, fail = 0;
    for (const t_case *c = cases; c->name; c++) {
        if (argc > 1 && !strstr(c->name, argv[1]))
            continue;
        t_failed_now = 0;
        c->fn();
        fflush(stdout);
        if (t_failed_now) {
            printf("FAIL %s\n", c->name);
            fail++;
        } else {
            printf("ok %s\n", c->name);
            pass++;
        }
    }
    printf("# %d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}

#define T_MAIN(cases)                                                       \
    int main(int argc, char **argv) { return t_run(cases, argc, argv); }

/* Where the fixtures are (set by tests/run; default for running by hand). */
static inline const char *t_fixture_dir(void)
{
    const char *d = getenv("CP_FIXTURES");
    return d ? d : "build/fixtures";
}

#endif
