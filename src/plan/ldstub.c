/* GNU ld's order of ARM long-branch stubs: the stub table's hash, the stub
 * names, and the section ids of a link rebuilt from its map file and its
 * input files (see ldstub.h for the rule and where it comes from). */
#include "plan/ldstub.h"

#include "plan/plan_int.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <ar.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t plan_ldstub_hash(const char *s)
{
    /* bfd/hash.c bfd_hash_hash: the hash is an unsigned long, 64 bits on
     * the hosts ld for arm-none-eabi is built for here (x86-64, arm64). */
    uint64_t h = 0;
    size_t len = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++, len++) {
        uint64_t c = *p;
        h += c + (c << 17);
        h ^= h >> 2;
    }
    h += len + ((uint64_t)len << 17);
    h ^= h >> 2;
    return h;
}

int plan_ldstub_name(char *buf, size_t n, uint32_t group_id, const char *sym,
                     int type)
{
    /* Addend 0: ARM ELF uses REL relocations, which ld reads with
     * r_addend 0 (_bfd_elf_link_read_relocs). */
    return snprintf(buf, n, "%08x_%s+%x_%d", group_id, sym, 0u, type);
}

int plan_ldstub_name_local(char *buf, size_t n, uint32_t group_id,
                           uint32_t sec_id, uint32_t rsym, int type)
{
    return snprintf(buf, n, "%08x_%x:%x+%x_%d", group_id, sec_id, rsym, 0u,
                    type);
}

uint64_t plan_ldstub_key(const char *name, uint32_t seq)
{
    uint64_t bucket = plan_ldstub_hash(name) % PLAN_LDSTUB_BUCKETS;
    /* bfd_hash_insert puts a new entry at the head of its bucket. */
    return bucket << 32 | (uint32_t)(UINT32_MAX - seq);
}

/* One input section of the link and its id. */
typedef struct ent {
    char *path;    /* "dir/x.o" or "dir/libc.a(member.o)" */
    char *name;
    uint32_t id;
    int dup;       /* the file has another section of this name */
} ent;

struct plan_ldstub_link {
    ent *e;
    size_t n, cap;
    uint32_t next; /* the section id counter */
    char *base;    /* the directory the link ran in, as a prefix of the
                      map's relative paths ("" or "DIR/") */
};

void plan_ldstub_link_free(plan_ldstub_link *k)
{
    if (!k)
        return;
    for (size_t i = 0; i < k->n; i++) {
        free(k->e[i].path);
        free(k->e[i].name);
    }
    free(k->e);
    free(k->base);
    free(k);
}

/* Whether section i of e becomes a BFD section (bfd_section_from_shdr):
 * the symbol table, its string table, the section name table and the
 * relocation sections of ordinary sections do not. */
static int is_bfd_section(Elf *e, size_t i, const GElf_Shdr *sh,
                          size_t shstrndx, size_t symtab, size_t strtab)
{
    if (i == 0 || i == shstrndx || i == symtab || i == strtab)
        return 0;
    if (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_SYMTAB_SHNDX)
        return 0;
    if ((sh->sh_type == SHT_REL || sh->sh_type == SHT_RELA) &&
        sh->sh_link == symtab && sh->sh_info != 0) {
        GElf_Shdr t;
        Elf_Scn *ts = elf_getscn(e, sh->sh_info);
        if (ts && gelf_getshdr(ts, &t) && t.sh_type != SHT_REL &&
            t.sh_type != SHT_RELA)
            return 0;
    }
    return 1;
}

static int known_path(const plan_ldstub_link *k, const char *path)
{
    for (size_t i = k->n; i > 0; i--)
        if (!strcmp(k->e[i - 1].path, path))
            return 1;
    return 0;
}

/* Numbers the sections of one object. load: ld loads it into the link
 * (else it only checks the format of a library's first member). */
static int number_object(plan_ldstub_link *k, Elf *e, const char *path,
                         int load)
{
    size_t shstrndx, nsec, symtab = 0, strtab = 0;
    if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0 ||
        elf_getshdrnum(e, &nsec) != 0)
        return -1;
    /* A first member that ld checked keeps the sections it got then. */
    int known = known_path(k, path);
    if (load && known) {
        k->next++; /* the plugin's dummy section, below */
        return 0;
    }
    for (size_t i = 1; i < nsec; i++) {
        GElf_Shdr sh;
        Elf_Scn *s = elf_getscn(e, i);
        if (s && gelf_getshdr(s, &sh) && sh.sh_type == SHT_SYMTAB) {
            symtab = i;
            strtab = sh.sh_link;
        }
    }
    size_t first = k->n;
    for (size_t i = 1; i < nsec; i++) {
        GElf_Shdr sh;
        Elf_Scn *s = elf_getscn(e, i);
        if (!s || !gelf_getshdr(s, &sh))
            return -1;
        if (!is_bfd_section(e, i, &sh, shstrndx, symtab, strtab))
            continue;
        uint32_t id = k->next++;
        if (known)
            continue; /* a second check of the same library */
        const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
        if (cp_grow((void **)&k->e, &k->cap, k->n + 1, sizeof *k->e) < 0)
            return -1;
        ent *x = &k->e[k->n];
        x->path = strdup(path);
        x->name = strdup(nm ? nm : "");
        x->id = id;
        x->dup = 0;
        if (!x->path || !x->name) {
            free(x->path);
            free(x->name);
            return -1;
        }
        for (size_t j = first; j < k->n; j++)
            if (!strcmp(k->e[j].name, x->name))
                k->e[j].dup = x->dup = 1;
        k->n++;
    }
    /* ld 2.40's LTO plugin (ld/plugin.c plugin_object_p) makes a dummy BFD
     * with one section for each file it is offered, after the file's own;
     * the gcc driver always loads the plugin. */
    if (load)
        k->next++;
    return 0;
}

/* An open input file: an object or an archive. */
typedef struct infile {
    int fd;
    Elf *e;
} infile;

/* base followed by path (malloc'd), or NULL. */
static char *at_base(const char *base, const char *path)
{
    size_t bl = strlen(base), pl = strlen(path);
    char *s = malloc(bl + pl + 1);
    if (s) {
        memcpy(s, base, bl);
        memcpy(s + bl, path, pl + 1);
    }
    return s;
}

/* Opens path (as the map names it) where the link saw it: relative paths
 * against base. Only a regular file (a map naming /dev/stdin would wait
 * for input). */
static int infile_open(infile *f, const char *base, const char *path)
{
    f->e = NULL;
    f->fd = -1;
    char *full = path[0] == '/' || !base[0] ? NULL : at_base(base, path);
    f->fd = open(full ? full : path, O_RDONLY);
    free(full);
    struct stat st;
    if (f->fd >= 0 && (fstat(f->fd, &st) < 0 || !S_ISREG(st.st_mode))) {
        close(f->fd);
        f->fd = -1;
    }
    if (f->fd < 0)
        return -1;
    f->e = elf_begin(f->fd, ELF_C_READ, NULL);
    if (!f->e) {
        close(f->fd);
        f->fd = -1;
        return -1;
    }
    return 0;
}

static void infile_close(infile *f)
{
    if (f->e)
        elf_end(f->e);
    if (f->fd >= 0)
        close(f->fd);
    f->e = NULL;
    f->fd = -1;
}

/* Calls fn on the archive member named member (the first regular member
 * when member is NULL); 0, or -1 when there is none. */
static int with_member(Elf *ar, int fd, const char *member,
                       int (*fn)(Elf *, const char *, void *), void *ctx)
{
    if (elf_rand(ar, SARMAG) != SARMAG)
        return -1;
    Elf *m;
    int rc = -1;
    while ((m = elf_begin(fd, ELF_C_READ, ar))) {
        Elf_Arhdr *h = elf_getarhdr(m);
        if (h && h->ar_name && h->ar_name[0] != '/' &&
            (!member || !strcmp(h->ar_name, member))) {
            rc = fn(m, h->ar_name, ctx);
            elf_end(m);
            break;
        }
        elf_next(m);
        elf_end(m);
    }
    return rc;
}

typedef struct numctx {
    plan_ldstub_link *k;
    const char *file;
    int load;
} numctx;

static int number_member(Elf *m, const char *name, void *p)
{
    numctx *c = p;
    char *path = malloc(strlen(c->file) + strlen(name) + 3);
    if (!path)
        return -1;
    sprintf(path, "%s(%s)", c->file, name);
    int rc = number_object(c->k, m, path, c->load);
    free(path);
    return rc;
}

/* A line list of the map: its LOAD lines and its archive members. */
typedef struct lines {
    char **s;
    size_t n, cap;
} lines;

static int lines_add(lines *l, const char *s, size_t n)
{
    if (cp_grow((void **)&l->s, &l->cap, l->n + 1, sizeof *l->s) < 0)
        return -1;
    l->s[l->n] = strndup(s, n);
    return l->s[l->n] ? (int)l->n++ : -1;
}

static void lines_free(lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->s[i]);
    free(l->s);
}

static int is_archive_path(const char *p)
{
    size_t n = strlen(p);
    return n > 2 && !strcmp(p + n - 2, ".a");
}

/* Whether member (a "file(member)" string) belongs to archive file. */
static int member_of(const char *member, const char *file)
{
    size_t n = strlen(file);
    return !strncmp(member, file, n) && member[n] == '(';
}

static int open_member(plan_ldstub_link *k, const char *full, int load)
{
    const char *p = strchr(full, '(');
    size_t n = strlen(full);
    if (!p || full[n - 1] != ')')
        return -1;
    char *file = strndup(full, (size_t)(p - full));
    char *mem = strndup(p + 1, n - (size_t)(p - full) - 2);
    infile f;
    int rc = -1;
    if (file && mem && infile_open(&f, k->base, file) == 0) {
        numctx c = {k, file, load};
        if (elf_kind(f.e) == ELF_K_AR)
            rc = with_member(f.e, f.fd, mem, number_member, &c);
        infile_close(&f);
    }
    free(file);
    free(mem);
    return rc;
}

static int read_map(const char *map_path, lines *load, lines *mem,
                    cp_err *err)
{
    FILE *fp = fopen(map_path, "r");
    if (!fp)
        return cp_seterr(err, "cannot read '%s'", map_path);
    char buf[4096];
    int in_members = 0;
    while (fgets(buf, sizeof buf, fp)) {
        size_t n = strcspn(buf, "\r\n");
        buf[n] = 0;
        if (!strcmp(buf, "Archive member included to satisfy reference by "
                         "file (symbol)")) {
            in_members = 1;
            continue;
        }
        if (in_members) {
            if (!buf[0] || buf[0] == ' ' || buf[0] == '\t')
                continue;
            const char *close = strchr(buf, ')');
            if (!strchr(buf, '(') || !close) {
                in_members = 0;
            } else if (lines_add(mem, buf, (size_t)(close + 1 - buf)) < 0) {
                fclose(fp);
                return cp_seterr(err, "out of memory");
            }
            if (in_members)
                continue;
        }
        if (!strncmp(buf, "LOAD ", 5) && strcmp(buf, "LOAD linker stubs") &&
            lines_add(load, buf + 5, n - 5) < 0) {
            fclose(fp);
            return cp_seterr(err, "out of memory");
        }
    }
    fclose(fp);
    if (!load->n)
        return cp_seterr(err, "'%s': no LOAD lines (not a GNU ld map?)",
                         map_path);
    return 0;
}

/* Whether path (as the map names it; an archive member by its archive) is
 * a regular file under base. */
static int file_under(const char *base, const char *path)
{
    size_t n = strcspn(path, "(");
    char *s = malloc(strlen(base) + n + 1);
    if (!s)
        return 0;
    memcpy(s, base, strlen(base));
    memcpy(s + strlen(base), path, n);
    s[strlen(base) + n] = 0;
    struct stat st;
    int ok = stat(s, &st) == 0 && S_ISREG(st.st_mode);
    free(s);
    return ok;
}

static int all_under(const char *base, const lines *load, const lines *mem)
{
    for (size_t i = 0; i < load->n; i++)
        if (load->s[i][0] != '/' && !file_under(base, load->s[i]))
            return 0;
    for (size_t i = 0; i < mem->n; i++)
        if (mem->s[i][0] != '/' && !file_under(base, mem->s[i]))
            return 0;
    return 1;
}

/* An input file the map names cannot be read: what (e.g. "cannot read
 * archive"), the file, and where a relative one was looked for. */
static void read_err(cp_err *err, const plan_ldstub_link *k, const char *what,
                     const char *file, const char *map_path)
{
    if (file[0] == '/')
        cp_seterr(err, "%s '%s' (named in '%s')", what, file, map_path);
    else if (k->base[0])
        cp_seterr(err, "%s '%s' (named in '%s', relative to %s)", what, file,
                  map_path, k->base);
    else
        cp_seterr(err, "%s '%s' (named in '%s', not found relative to the "
                  "current directory, the map's or a parent of it: give the "
                  "directory the link ran in with --build-dir)", what, file,
                  map_path);
}

/* The directory ld ran in, which the map's relative paths
 * ("build/fw/obj/m0/demo/calib.o") are relative to, as a prefix: DIR/ for
 * build_dir when given; else "" (the current directory) when every file
 * the map names is there, or the map's directory or the nearest of its
 * parents where they all are (a link writes its map below the directory
 * it runs in). "" when none has them all: the caller's error names the
 * first file missing. NULL when out of memory. */
static char *link_base(const char *map_path, const char *build_dir,
                       const lines *load, const lines *mem)
{
    if (build_dir && build_dir[0])
        return at_base(build_dir, "/");
    if (all_under("", load, mem))
        return strdup("");
    char *dir = realpath(map_path, NULL);
    if (!dir)
        return strdup("");
    for (char *slash = strrchr(dir, '/'); slash; slash = strrchr(dir, '/')) {
        slash[1] = 0; /* "DIR/": the map's directory, then its parents */
        if (all_under(dir, load, mem))
            return dir;
        slash[0] = 0;
    }
    free(dir);
    return strdup("");
}

plan_ldstub_link *plan_ldstub_link_read(const char *map_path,
                                        const char *build_dir, cp_err *err)
{
    lines load = {0}, mem = {0};
    if (read_map(map_path, &load, &mem, err) < 0) {
        lines_free(&load);
        lines_free(&mem);
        return NULL;
    }
    elf_version(EV_CURRENT);
    plan_ldstub_link *k = calloc(1, sizeof *k);
    if (!k || !(k->base = link_base(map_path, build_dir, &load, &mem))) {
        cp_seterr(err, "out of memory");
        goto fail;
    }
    /* ld's ARM emulation makes .glue_7, .glue_7t, .vfp11_veneer and .v4_bx
     * in its "linker stubs" BFD before it opens any input
     * (arm_elf_create_output_section_statements); the counter starts at
     * 0x10 (bfd/section.c: ids 0 to 3 are the standard sections). */
    k->next = 0x10 + 4;
    size_t p = 0;
    for (size_t i = 0; i < load.n; i++) {
        const char *file = load.s[i];
        if (!is_archive_path(file)) {
            infile f;
            if (infile_open(&f, k->base, file) < 0 ||
                number_object(k, f.e, file, 1) < 0) {
                if (f.fd >= 0)
                    infile_close(&f);
                read_err(err, k, "cannot read the section headers of", file,
                         map_path);
                goto fail;
            }
            infile_close(&f);
            continue;
        }
        /* A library found by -l: ld checks that its first member is an
         * object of the output's format (ldfile_try_open_bfd), which makes
         * that member's sections; it is not offered to the plugin. */
        infile f;
        numctx c = {k, file, 0};
        if (infile_open(&f, k->base, file) < 0 || elf_kind(f.e) != ELF_K_AR ||
            with_member(f.e, f.fd, NULL, number_member, &c) < 0) {
            if (f.fd >= 0)
                infile_close(&f);
            read_err(err, k, "cannot read archive", file, map_path);
            goto fail;
        }
        infile_close(&f);
        /* The members ld took from it on its first pass. */
        for (; p < mem.n && member_of(mem.s[p], file); p++)
            if (open_member(k, mem.s[p], 1) < 0) {
                read_err(err, k, "cannot read", mem.s[p], map_path);
                goto fail;
            }
    }
    /* Members pulled in when a group was searched again. */
    for (; p < mem.n; p++)
        if (open_member(k, mem.s[p], 1) < 0) {
            read_err(err, k, "cannot read", mem.s[p], map_path);
            goto fail;
        }
    lines_free(&load);
    lines_free(&mem);
    return k;
fail:
    lines_free(&load);
    lines_free(&mem);
    plan_ldstub_link_free(k);
    return NULL;
}

long plan_ldstub_sec_id(const plan_ldstub_link *k, const char *path,
                        const char *secname)
{
    for (size_t i = 0; i < k->n; i++)
        if (!strcmp(k->e[i].path, path) && !strcmp(k->e[i].name, secname))
            return k->e[i].dup ? -1 : (long)k->e[i].id;
    return -1;
}

typedef struct relctx {
    const char *secname;
    void (*fn)(const plan_ldstub_rel *, void *);
    void *ctx;
    long seen;
} relctx;

/* R_ARM_THM_CALL, R_ARM_THM_JUMP24, R_ARM_THM_JUMP19 (ELF for the Arm
 * Architecture, 5.6.1 "Relocation codes"): the Thumb branches ld may give
 * a long-branch stub. */
static int is_branch_rel(unsigned t)
{
    return t == 10 || t == 30 || t == 51;
}

static int scan_relocs(Elf *e, const char *name, void *p)
{
    (void)name;
    relctx *c = p;
    size_t shstrndx;
    if (elf_kind(e) != ELF_K_ELF || elf_getshdrstrndx(e, &shstrndx) != 0)
        return -1;
    size_t target = 0, nmatch = 0;
    Elf_Scn *s = NULL;
    while ((s = elf_nextscn(e, s))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(s, &sh))
            return -1;
        const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
        if (nm && !strcmp(nm, c->secname) && sh.sh_type != SHT_REL) {
            target = elf_ndxscn(s);
            nmatch++;
        }
    }
    if (nmatch != 1)
        return -1;
    c->seen = 0;
    s = NULL;
    while ((s = elf_nextscn(e, s))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(s, &sh) || sh.sh_type != SHT_REL ||
            sh.sh_info != target)
            continue;
        Elf_Scn *ss = elf_getscn(e, sh.sh_link);
        GElf_Shdr ssh;
        Elf_Data *rd = elf_getdata(s, NULL);
        Elf_Data *sd = ss ? elf_getdata(ss, NULL) : NULL;
        if (!ss || !gelf_getshdr(ss, &ssh) || !rd || !sd)
            return -1;
        size_t nrel = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
        for (size_t r = 0; r < nrel; r++) {
            GElf_Rel rel;
            GElf_Sym sym;
            if (!gelf_getrel(rd, (int)r, &rel))
                return -1;
            if (!is_branch_rel((unsigned)GELF_R_TYPE(rel.r_info)))
                continue;
            uint32_t rs = (uint32_t)GELF_R_SYM(rel.r_info);
            if (!gelf_getsym(sd, (int)rs, &sym))
                return -1;
            const char *sn = elf_strptr(e, ssh.sh_link, sym.st_name);
            const char *secn = "";
            if (sym.st_shndx != SHN_UNDEF && sym.st_shndx < SHN_LORESERVE) {
                GElf_Shdr d;
                Elf_Scn *ds = elf_getscn(e, sym.st_shndx);
                if (ds && gelf_getshdr(ds, &d))
                    secn = elf_strptr(e, shstrndx, d.sh_name);
            }
            plan_ldstub_rel x = {
                .offset = (uint32_t)rel.r_offset,
                .index = (uint32_t)r,
                .rsym = rs,
                .sym = sn ? sn : "",
                .local = GELF_ST_BIND(sym.st_info) == STB_LOCAL,
                .section_sym = GELF_ST_TYPE(sym.st_info) == STT_SECTION,
                .sym_sec = secn ? secn : "",
            };
            c->fn(&x, c->ctx);
            c->seen++;
        }
    }
    return 0;
}

long plan_ldstub_branches(const plan_ldstub_link *k, const char *path,
                          const char *secname,
                          void (*fn)(const plan_ldstub_rel *, void *),
                          void *ctx)
{
    elf_version(EV_CURRENT);
    relctx c = {secname, fn, ctx, 0};
    const char *p = strchr(path, '(');
    size_t n = strlen(path);
    int rc = -1;
    if (p && n && path[n - 1] == ')') {
        char *file = strndup(path, (size_t)(p - path));
        char *mem = strndup(p + 1, n - (size_t)(p - path) - 2);
        infile f;
        if (file && mem && infile_open(&f, k->base, file) == 0) {
            if (elf_kind(f.e) == ELF_K_AR)
                rc = with_member(f.e, f.fd, mem, scan_relocs, &c);
            infile_close(&f);
        }
        free(file);
        free(mem);
    } else {
        infile f;
        if (infile_open(&f, k->base, path) == 0) {
            rc = scan_relocs(f.e, path, &c);
            infile_close(&f);
        }
    }
    return rc < 0 ? -1 : c.seen;
}

/* The map's input section of unit u (same address and name), or NULL. */
static const img_isec *unit_isec(const plan_model *m, const plan_unit *u)
{
    size_t lo = 0, hi = img_nisecs(m->im);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (img_isec_at(m->im, mid)->addr < u->addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < img_nisecs(m->im); lo++) {
        const img_isec *s = img_isec_at(m->im, lo);
        if (s->addr != u->addr)
            break;
        if (!strcmp(s->name, u->isec) && s->path)
            return s;
    }
    return NULL;
}

/* Naming one caller unit's call sites from its branch relocations. */
typedef struct matchctx {
    plan_model *m;
    uint32_t caller;
    const char **suffix; /* per site: its stub's name after the group id */
    const char **sym;    /* per site: the relocation's symbol */
    int oom;
} matchctx;

static void match_rel(const plan_ldstub_rel *r, void *p)
{
    matchctx *c = p;
    plan_model *m = c->m;
    const plan_site *site =
        plan_model_site_at(m, m->units[c->caller].addr + r->offset);
    if (!site || site->caller != c->caller)
        return; /* a branch inside the unit, or to code no unit holds */
    size_t si = (size_t)(site - m->sites);
    const plan_target *tg = &m->targets[site->target];
    const img_func *f = img_lookup(m->im, tg->addr);
    if (!f || f->addr != tg->addr)
        return;
    int hit;
    const char *sym = r->sym;
    char wrap[300];
    if (r->section_sym) {
        /* A section symbol: only a static function alone at the start of
         * its section (addend 0). */
        hit = r->local && !strcmp(r->sym_sec, m->units[tg->unit].isec) &&
              m->units[tg->unit].addr == tg->addr;
    } else {
        hit = img_func_named(f, r->sym);
        /* ld --wrap=SYM (pico-sdk wraps __aeabi_idiv, memcpy, ...): a call
         * naming SYM reaches __wrap_SYM, the name ld gives its stub. */
        if (!hit && strlen(r->sym) < sizeof wrap - 8) {
            snprintf(wrap, sizeof wrap, "__wrap_%s", r->sym);
            hit = img_func_named(f, wrap);
            sym = wrap;
        }
    }
    if (!hit)
        return; /* the site stays unnamed: the order is a guess */
    char buf[600];
    if (r->local) {
        uint32_t id = m->unit_sec_id[tg->unit];
        if (id == UINT32_MAX)
            return;
        plan_ldstub_name_local(buf, sizeof buf, 0, id, r->rsym, m->stub_type);
    } else {
        plan_ldstub_name(buf, sizeof buf, 0, sym, m->stub_type);
    }
    /* Without the "00000000" of the group id. */
    c->suffix[si] = cp_pool_str(m->pool, buf + 8);
    c->sym[si] = sym[0] ? cp_pool_str(m->pool, sym) : NULL;
    if (!c->suffix[si] || (sym[0] && !c->sym[si]))
        c->oom = 1;
    /* ld scans input files in load order, their sections in order and each
     * section's relocations in order: the first relocation that needs a
     * stub creates it. */
    m->sites[si].seq = m->unit_sec_id[c->caller] << 12 |
                       (r->index < 0xfff ? r->index : 0xfff);
}

static int not_applied(plan_model *m, const char *why)
{
    m->stub_order = 0;
    m->stub_order_why = cp_pool_str(m->pool, why);
    return m->stub_order_why ? 0 : -1;
}

/* One target per (address, stub name), as ld makes one stub per name
 * (elf32_arm_stub_name): a site whose name differs from its target's moves
 * to the target of that name, made when new. The calls are rebuilt from
 * the sites (in site order, as find_calls made them). */
static int split_targets(plan_model *m, const char **suffix, const char **sym)
{
    for (size_t i = 0; i < m->nsites; i++) {
        plan_site *s = &m->sites[i];
        if (!suffix[i])
            continue;
        plan_target *tg = &m->targets[s->target];
        if (!tg->suffix) {
            tg->suffix = suffix[i];
            tg->sym = sym[i];
            continue;
        }
        if (!strcmp(tg->suffix, suffix[i]))
            continue;
        size_t k;
        for (k = 0; k < m->ntargets; k++)
            if (m->targets[k].addr == tg->addr && m->targets[k].suffix &&
                !strcmp(m->targets[k].suffix, suffix[i]))
                break;
        if (k == m->ntargets) {
            plan_target nt = {tg->addr, tg->unit, sym[i], suffix[i]};
            if (cp_grow((void **)&m->targets, &m->ctargets, m->ntargets + 1,
                        sizeof *m->targets) < 0)
                return -1;
            m->targets[m->ntargets++] = nt;
        }
        s->target = (uint32_t)k;
    }
    m->ncalls = 0;
    for (size_t i = 0; i < m->nsites; i++)
        if (plan_model_add_call(m, m->sites[i].caller, m->sites[i].target) < 0)
            return -1;
    return 0;
}

/* The call index of (caller, target). */
static size_t call_index(const plan_model *m, uint32_t caller, uint32_t t)
{
    for (size_t i = 0; i < m->ncalls; i++)
        if (m->calls[i].caller == caller && m->calls[i].target == t)
            return i;
    return m->ncalls;
}

/* Per target, the calls to it (tcall_start, tcall), and per call the first
 * of its relocations ld meets (call_seq, UINT32_MAX when a site of it has
 * no name). */
static int index_calls(plan_model *m, const char **suffix)
{
    size_t nc = m->ncalls ? m->ncalls : 1;
    free(m->call_seq);
    free(m->tcall_start);
    free(m->tcall);
    m->call_seq = malloc(nc * sizeof *m->call_seq);
    m->tcall_start = calloc(m->ntargets + 1, sizeof *m->tcall_start);
    m->tcall = malloc(nc * sizeof *m->tcall);
    unsigned char *unnamed = calloc(nc, 1);
    size_t *next = malloc((m->ntargets ? m->ntargets : 1) * sizeof *next);
    if (!m->call_seq || !m->tcall_start || !m->tcall || !unnamed || !next) {
        free(unnamed);
        free(next);
        return -1;
    }
    m->stub_nc = m->ncalls;
    for (size_t i = 0; i < m->ncalls; i++) {
        m->call_seq[i] = UINT32_MAX;
        m->tcall_start[m->calls[i].target + 1]++;
    }
    for (size_t i = 0; i < m->nsites; i++) {
        const plan_site *s = &m->sites[i];
        size_t c = call_index(m, s->caller, s->target);
        if (c == m->ncalls)
            continue;
        if (!suffix || !suffix[i])
            unnamed[c] = 1;
        else if (s->seq < m->call_seq[c])
            m->call_seq[c] = s->seq;
    }
    for (size_t i = 0; i < m->ncalls; i++)
        if (unnamed[i])
            m->call_seq[i] = UINT32_MAX;
    for (size_t t = 0; t < m->ntargets; t++)
        m->tcall_start[t + 1] += m->tcall_start[t];
    for (size_t t = 0; t < m->ntargets; t++)
        next[t] = m->tcall_start[t];
    for (size_t i = 0; i < m->ncalls; i++)
        m->tcall[next[m->calls[i].target]++] = (uint32_t)i;
    free(unnamed);
    free(next);
    return 0;
}

int plan_ldstub_setup(plan_model *m)
{
    m->stub_order = 0;
    m->stub_type = tgt_stub_thumb2(m->t) ? PLAN_LDSTUB_THUMB2_ONLY
                                         : PLAN_LDSTUB_THUMB_ONLY;
    m->unit_sec_id = malloc((m->nunits ? m->nunits : 1) *
                            sizeof *m->unit_sec_id);
    if (!m->unit_sec_id || index_calls(m, NULL) < 0)
        return -1;
    const char *map = img_map_path(m->im);
    if (!map || !img_nisecs(m->im))
        return not_applied(m, "no map file");
    size_t ns = m->nsites ? m->nsites : 1;
    const char **suffix = calloc(ns, sizeof *suffix);
    const char **sym = calloc(ns, sizeof *sym);
    if (!suffix || !sym) {
        free(suffix);
        free(sym);
        return -1;
    }
    cp_err e;
    plan_ldstub_link *k =
        plan_ldstub_link_read(map, img_build_dir(m->im), &e);
    int rc = 0;
    char why[600];
    if (!k) {
        rc = not_applied(m, e.msg);
        goto out;
    }
    /* An archive member the map shows sections of but does not list as
     * taken (--whole-archive): ld numbered it where the map cannot say. */
    for (size_t i = 0; i < img_nisecs(m->im); i++) {
        const img_isec *s = img_isec_at(m->im, i);
        if (s->size && s->path && strchr(s->path, '(') &&
            !known_path(k, s->path)) {
            snprintf(why, sizeof why, "'%s' is not in the map's list of "
                     "archive members (--whole-archive?)", s->path);
            rc = not_applied(m, why);
            goto out;
        }
    }
    for (size_t u = 0; u < m->nunits; u++) {
        const img_isec *s = unit_isec(m, &m->units[u]);
        long id = s ? plan_ldstub_sec_id(k, s->path, s->name) : -1;
        m->unit_sec_id[u] = id < 0 ? UINT32_MAX : (uint32_t)id;
    }
    /* The names ld gives the stubs: from the relocations of the calls. */
    for (size_t u = 0; u < m->nunits; u++) {
        int calls = 0;
        for (size_t i = 0; i < m->ncalls && !calls; i++)
            calls = m->calls[i].caller == u;
        if (!calls)
            continue;
        const img_isec *s = unit_isec(m, &m->units[u]);
        if (!s || m->unit_sec_id[u] == UINT32_MAX) {
            snprintf(why, sizeof why, "no section id for %s",
                     m->units[u].isec);
            rc = not_applied(m, why);
            goto out;
        }
        matchctx c = {m, (uint32_t)u, suffix, sym, 0};
        if (plan_ldstub_branches(k, s->path, s->name, match_rel, &c) < 0) {
            snprintf(why, sizeof why, "cannot read the relocations of %s in "
                     "'%s'", s->name, s->path);
            rc = not_applied(m, why);
            goto out;
        }
        if (c.oom) {
            rc = -1;
            goto out;
        }
    }
    if (split_targets(m, suffix, sym) < 0 || index_calls(m, suffix) < 0) {
        rc = -1;
        goto out;
    }
    m->stub_order = 1;
out:
    plan_ldstub_link_free(k);
    free(suffix);
    free(sym);
    return rc;
}

typedef struct keyed {
    uint64_t key;
    uint32_t target;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

int plan_ldstub_sort(const plan_model *m, uint32_t group_unit,
                     const unsigned char *fast, int from_fast, uint32_t *tg,
                     size_t n)
{
    if (!m->stub_order || m->ncalls != m->stub_nc ||
        group_unit >= m->nunits || m->unit_sec_id[group_unit] == UINT32_MAX)
        return -1;
    uint32_t id = m->unit_sec_id[group_unit];
    keyed *k = malloc((n ? n : 1) * sizeof *k);
    if (!k)
        return -1;
    for (size_t j = 0; j < n; j++) {
        /* Its stub: the target's name, created by the first of its calls
         * from the group's side. */
        uint32_t t = tg[j], seq = UINT32_MAX;
        if (t >= m->stub_nt || !m->targets[t].suffix) {
            free(k);
            return -1;
        }
        const char *suffix = m->targets[t].suffix;
        int any = 0;
        for (size_t q = m->tcall_start[t]; q < m->tcall_start[t + 1]; q++) {
            uint32_t i = m->tcall[q];
            if (!fast[m->calls[i].caller] != !from_fast)
                continue;
            if (m->call_seq[i] == UINT32_MAX) {
                free(k); /* a call site whose name is not known */
                return -1;
            }
            any = 1;
            if (m->call_seq[i] < seq)
                seq = m->call_seq[i];
        }
        if (!any) {
            free(k);
            return -1;
        }
        /* The stub's name in this group, and its place in ld's table. */
        char buf[640];
        snprintf(buf, sizeof buf, "%08x%s", id, suffix);
        uint64_t key = plan_ldstub_key(buf, 0);
        k[j] = (keyed){(key & ~(uint64_t)UINT32_MAX) |
                           (uint32_t)(UINT32_MAX - seq), t};
    }
    qsort(k, n, sizeof *k, cmp_keyed);
    for (size_t j = 0; j < n; j++)
        tg[j] = k[j].target;
    free(k);
    return 0;
}

uint64_t plan_ldstub_bucket(const plan_model *m, uint32_t group_unit,
                            const char *suffix)
{
    if (!suffix || group_unit >= m->nunits ||
        m->unit_sec_id[group_unit] == UINT32_MAX)
        return UINT64_MAX;
    char buf[640];
    snprintf(buf, sizeof buf, "%08x%s", m->unit_sec_id[group_unit], suffix);
    return plan_ldstub_hash(buf) % PLAN_LDSTUB_BUCKETS;
}
