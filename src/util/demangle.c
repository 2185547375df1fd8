/* C++ names for people: the C++ runtime's demangler (the Itanium C++ ABI's
 * __cxa_demangle, in libstdc++), declared here so C code can call it. */
#include "util/util.h"

#include <stdlib.h>
#include <string.h>

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *cp_demangle(const char *name)
{
    if (!name || strncmp(name, "_Z", 2))
        return NULL;
    int status = 0;
    char *d = __cxa_demangle(name, NULL, NULL, &status);
    if (status != 0 || !d) {
        free(d);
        return NULL;
    }
    return d;
}
