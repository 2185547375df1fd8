/* Input-section alignments from the object files and archives a map file
 * names: what the linker will keep when it places a section elsewhere. */
#include "image/image_int.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Splits "dir/libc.a(member.o)" into the file and the member (NULL for a
 * plain object). Returns the file part's length. */
static size_t split_path(const char *path, const char **member, size_t *mlen)
{
    size_t n = strlen(path);
    const char *p = strchr(path, '(');
    if (p && n && path[n - 1] == ')') {
        *member = p + 1;
        *mlen = (size_t)(path + n - 1 - (p + 1));
        return (size_t)(p - path);
    }
    *member = NULL;
    *mlen = 0;
    return n;
}

/* Sets the alignment of the isecs of one object (its ELF handle). */
static size_t apply_object(img *im, Elf *e, const char *file, size_t flen,
                           const char *member, size_t mlen)
{
    size_t shstrndx, got = 0;
    if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0)
        return 0;
    for (size_t i = 0; i < im->nisecs; i++) {
        img_isec *s = &im->isecs[i];
        const char *m2;
        size_t ml2;
        size_t fl2 = split_path(s->path, &m2, &ml2);
        if (s->align || fl2 != flen || strncmp(s->path, file, flen))
            continue;
        if ((member == NULL) != (m2 == NULL))
            continue;
        if (member && (ml2 != mlen || strncmp(m2, member, mlen)))
            continue;
        Elf_Scn *scn = NULL;
        while ((scn = elf_nextscn(e, scn))) {
            GElf_Shdr sh;
            if (!gelf_getshdr(scn, &sh))
                break;
            const char *name = elf_strptr(e, shstrndx, sh.sh_name);
            if (name && !strcmp(name, s->name)) {
                s->align = sh.sh_addralign ? (uint32_t)sh.sh_addralign : 1;
                got++;
                break;
            }
        }
    }
    return got;
}

/* A map names objects relative to where the link ran, which is usually
 * the map's own directory or one above it (a build directory): try the
 * path as given, then against the map's directory and its ancestors; or
 * only against the build directory when one was given
 * (img_set_build_dir). */
static int open_object(const img *im, const char *file)
{
    if (im->build_dir && file[0] != '/') {
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", im->build_dir, file);
        return open(full, O_RDONLY);
    }
    int fd = open(file, O_RDONLY);
    if (fd >= 0 || file[0] == '/' || !im->map_path)
        return fd;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", im->map_path);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash)
            return -1;
        *slash = 0;
        char full[8192];
        snprintf(full, sizeof full, "%s/%s", dir[0] ? dir : "", file);
        if ((fd = open(full, O_RDONLY)) >= 0)
            return fd;
    }
}

size_t img_load_isec_align(img *im)
{
    if (elf_version(EV_CURRENT) == EV_NONE)
        return 0;
    size_t got = 0;
    for (size_t i = 0; i < im->nisecs; i++) {
        img_isec *s = &im->isecs[i];
        if (s->align)
            continue;
        const char *member;
        size_t mlen, flen = split_path(s->path, &member, &mlen);
        char file[4096];
        if (flen >= sizeof file)
            continue;
        memcpy(file, s->path, flen);
        file[flen] = 0;
        int fd = open_object(im, file);
        if (fd < 0) {
            s->align = 0;
            continue;
        }
        Elf *e = elf_begin(fd, ELF_C_READ, NULL);
        if (e && elf_kind(e) == ELF_K_AR) {
            Elf *m;
            Elf_Cmd cmd = ELF_C_READ;
            while ((m = elf_begin(fd, cmd, e))) {
                Elf_Arhdr *h = elf_getarhdr(m);
                if (h && h->ar_name)
                    got += apply_object(im, m, s->path, flen, h->ar_name,
                                        strlen(h->ar_name));
                cmd = elf_next(m);
                elf_end(m);
            }
        } else if (e) {
            got += apply_object(im, e, s->path, flen, NULL, 0);
        }
        elf_end(e);
        close(fd);
        /* Sections of this file that were not found keep 0; mark them so
         * the file is not opened again. */
        for (size_t k = i; k < im->nisecs; k++) {
            img_isec *t = &im->isecs[k];
            const char *m2;
            size_t ml2;
            if (!t->align && split_path(t->path, &m2, &ml2) == flen &&
                !strncmp(t->path, s->path, flen))
                t->align = (uint32_t)-1;
        }
    }
    /* Unknown stays 0 for callers. */
    for (size_t i = 0; i < im->nisecs; i++)
        if (im->isecs[i].align == (uint32_t)-1)
            im->isecs[i].align = 0;
    return got;
}
