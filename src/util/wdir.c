#include "util/wdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void wdir_clear(cp_wdir *w)
{
    free(w->path);
    free(w->tmp);
    w->path = w->tmp = NULL;
}

/* Removes dir and the files in it (not recursive: the sets are flat). */
static void remove_flat(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[PATH_MAX];
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
            snprintf(p, sizeof p, "%s/%s", dir, de->d_name) < (int)sizeof p)
            unlink(p);
    if (d)
        closedir(d);
    rmdir(dir);
}

/* The first entry of dir that is not a regular file, or "" (name holds
 * it). -1 when dir cannot be read. */
static int first_odd(const char *dir, char *name, size_t n)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char p[PATH_MAX];
    struct stat st;
    name[0] = 0;
    if (!d)
        return -1;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (snprintf(p, sizeof p, "%s/%s", dir, de->d_name) >= (int)sizeof p ||
            lstat(p, &st) < 0 || !S_ISREG(st.st_mode)) {
            snprintf(name, n, "%s", de->d_name);
            break;
        }
    }
    closedir(d);
    return 0;
}

int cp_wdir_open(cp_wdir *w, const char *path, cp_err *err)
{
    memset(w, 0, sizeof *w);
    struct stat st;
    mode_t um = umask(0);
    umask(um);
    mode_t mode = 0777 & ~um;
    if (lstat(path, &st) == 0) {
        /* (a link to a directory: the directory is replaced, not the link) */
        w->path = S_ISLNK(st.st_mode) ? realpath(path, NULL) : strdup(path);
        const char *why = !w->path || stat(w->path, &st) < 0
                              ? strerror(errno)
                              : !S_ISDIR(st.st_mode) ? "not a directory" : NULL;
        if (why) {
            cp_seterr(err, "cannot write into '%s': %s", path, why);
            wdir_clear(w);
            return -1;
        }
        char odd[256];
        if (first_odd(w->path, odd, sizeof odd) < 0 || odd[0]) {
            int e = errno;
            wdir_clear(w);
            return odd[0] ? cp_seterr(err, "'%s' holds '%s', which is not a "
                                      "file: the snippets are replaced as a "
                                      "set by renaming the directory; give "
                                      "a directory of their own", path, odd)
                          : cp_seterr(err, "cannot read '%s': %s", path,
                                      strerror(e));
        }
        mode = st.st_mode & 07777;
    } else if (!(w->path = strdup(path))) {
        return cp_seterr(err, "out of memory");
    }
    /* beside it: "place/" is "place", whose temporary is "place.tmp.X" */
    size_t l = strlen(w->path);
    while (l > 1 && w->path[l - 1] == '/')
        w->path[--l] = 0;
    if (!(w->tmp = malloc(l + 16))) {
        wdir_clear(w);
        return cp_seterr(err, "out of memory");
    }
    snprintf(w->tmp, l + 16, "%s.tmp.XXXXXX", w->path);
    if (!mkdtemp(w->tmp)) {
        int e = errno;
        cp_seterr(err, "cannot create directory '%s': %s", path, strerror(e));
        wdir_clear(w);
        return -1;
    }
    chmod(w->tmp, mode);
    return 0;
}

/* The regular files of the old directory that the new set lacks, linked
 * into it so that the rename keeps them. */
static int keep_others(const cp_wdir *w, cp_err *err)
{
    DIR *d = opendir(w->path);
    struct dirent *de;
    char from[PATH_MAX], to[PATH_MAX];
    int rc = 0;
    if (!d)
        return cp_seterr(err, "cannot read '%s': %s", w->path, strerror(errno));
    while (rc == 0 && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (snprintf(from, sizeof from, "%s/%s", w->path, de->d_name) >=
                (int)sizeof from ||
            snprintf(to, sizeof to, "%s/%s", w->tmp, de->d_name) >=
                (int)sizeof to)
            rc = cp_seterr(err, "'%s/%s': name too long", w->path, de->d_name);
        else if (access(to, F_OK) != 0 && link(from, to) != 0)
            rc = cp_seterr(err, "cannot keep '%s' in the new set: %s", from,
                           strerror(errno));
    }
    closedir(d);
    return rc;
}

int cp_wdir_commit(cp_wdir *w, cp_err *err)
{
    struct stat st;
    if (!w->tmp)
        return cp_seterr(err, "cannot write '%s'", w->path ? w->path : "?");
    if (stat(w->path, &st) != 0) {
        if (rename(w->tmp, w->path) != 0) {
            cp_seterr(err, "cannot create '%s': %s", w->path, strerror(errno));
            cp_wdir_abort(w);
            return -1;
        }
        wdir_clear(w);
        return 0;
    }
    if (keep_others(w, err) < 0) {
        cp_wdir_abort(w);
        return -1;
    }
    /* One step: the two directories swap names (Linux renameat2). Where the
     * file system cannot, the old one steps aside first: for a moment there
     * is no directory, never a mixed one. */
    if (renameat2(AT_FDCWD, w->tmp, AT_FDCWD, w->path, RENAME_EXCHANGE) != 0) {
        char *old = malloc(strlen(w->path) + 16);
        int e = errno;
        if (old)
            snprintf(old, strlen(w->path) + 16, "%s.old.XXXXXX", w->path);
        if (!old || !mkdtemp(old) || rename(w->path, old) != 0) {
            if (old)
                rmdir(old);
            free(old);
            cp_seterr(err, "cannot replace '%s': %s", w->path, strerror(e));
            cp_wdir_abort(w);
            return -1;
        }
        if (rename(w->tmp, w->path) != 0) {
            e = errno;
            rename(old, w->path);
            free(old);
            cp_seterr(err, "cannot replace '%s': %s", w->path, strerror(e));
            cp_wdir_abort(w);
            return -1;
        }
        remove_flat(old);
        free(old);
        wdir_clear(w);
        return 0;
    }
    remove_flat(w->tmp); /* the old set, now under the temporary name */
    wdir_clear(w);
    return 0;
}

void cp_wdir_abort(cp_wdir *w)
{
    if (w->tmp)
        remove_flat(w->tmp);
    wdir_clear(w);
}
