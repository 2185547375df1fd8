#include "util/wfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void wfile_clear(cp_wfile *w)
{
    free(w->path);
    free(w->tmp);
    w->f = NULL;
    w->path = w->tmp = NULL;
}

int cp_wfile_open(cp_wfile *w, const char *path, cp_err *err)
{
    memset(w, 0, sizeof *w);
    struct stat st;
    if (!(w->path = strdup(path)))
        return cp_seterr(err, "out of memory");
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) {
            wfile_clear(w);
            return cp_seterr(err, "cannot create '%s': it is a directory",
                             path);
        }
        if (!(w->f = fopen(path, "w"))) {
            int e = errno;
            wfile_clear(w);
            return cp_seterr(err, "cannot create '%s': %s", path, strerror(e));
        }
        return 0;
    }
    size_t n = strlen(path) + 16;
    if (!(w->tmp = malloc(n))) {
        wfile_clear(w);
        return cp_seterr(err, "out of memory");
    }
    snprintf(w->tmp, n, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(w->tmp);
    if (fd < 0) {
        int e = errno;
        wfile_clear(w);
        return cp_seterr(err, "cannot create '%s': %s", path, strerror(e));
    }
    mode_t um = umask(0);
    umask(um);
    fchmod(fd, 0666 & ~um);
    if (!(w->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(w->tmp);
        wfile_clear(w);
        return cp_seterr(err, "cannot create '%s': %s", path, strerror(e));
    }
    return 0;
}

int cp_wfile_commit(cp_wfile *w, cp_err *err)
{
    if (!w->f)
        return cp_seterr(err, "cannot write '%s'", w->path ? w->path : "?");
    int bad = fflush(w->f) != 0 || ferror(w->f);
    int e = errno;
    if (!bad && w->tmp && fsync(fileno(w->f)) != 0 && errno != EINVAL) {
        bad = 1;
        e = errno;
    }
    if (fclose(w->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    w->f = NULL;
    if (!bad && w->tmp && rename(w->tmp, w->path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        if (w->tmp)
            unlink(w->tmp);
        cp_seterr(err, "cannot write '%s': %s", w->path,
                  e ? strerror(e) : "write error");
        wfile_clear(w);
        return -1;
    }
    wfile_clear(w);
    return 0;
}

void cp_wfile_abort(cp_wfile *w)
{
    if (w->f)
        fclose(w->f);
    if (w->tmp)
        unlink(w->tmp);
    wfile_clear(w);
}

int cp_wfile_write(const char *path, int (*fn)(FILE *f, void *arg, cp_err *err),
                   void *arg, cp_err *err)
{
    cp_wfile w;
    if (cp_wfile_open(&w, path, err) < 0)
        return -1;
    cp_err local;
    if (!err)
        err = &local;
    err->msg[0] = 0;
    if (fn(w.f, arg, err) < 0) {
        int e = errno;
        if (!err->msg[0])
            cp_seterr(err, "cannot write '%s': %s", path,
                      e ? strerror(e) : "write error");
        cp_wfile_abort(&w);
        return -1;
    }
    return cp_wfile_commit(&w, err);
}
