/* The set index's state, shared by setidx.c (the index over a walk) and
 * setidx-map.c (its front end for a stream and a map). */
#ifndef CP_CACHE_SETIDX_INT_H
#define CP_CACHE_SETIDX_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cache/cache.h"
#include "cache/stream_int.h"

/* A line the LRU shortcut may leave in a set: its last access time, the
 * merge's order among accesses of the same time, the line. */
typedef struct sx_cand {
    uint32_t t;
    int64_t pri;
    uint32_t line;
} sx_cand;

typedef struct sx_occ {
    uint32_t k;   /* unit */
    uint32_t l;   /* its line */
} sx_occ;

/* What csim_setidx_new adds: the stream, the index's own map and the
 * walk's state (setidx-map.c). */
typedef struct sx_front sx_front;

struct csim_setidx {
    csim_walk walk;
    uint32_t sets, mask, ls;
    unsigned ways;        /* the cache's ways */
    int lru;              /* LRU: a set's cold part is skipped (lru_skip_to) */
    int lru2;             /* 2-way LRU: a set replayed by two tags */
    int broken;           /* a reload failed half-way */
    csim_cache *c;        /* the target's cache; one set simulated at a time */
    /* Workloads, in walk time: each starts with its set empty, counts
     * misses from wwarm[k] on, each weighted wscale[k]. */
    unsigned nwork;
    uint32_t wstart[CSIM_MAX_WORK], wwarm[CSIM_MAX_WORK];
    double wscale[CSIM_MAX_WORK];
    /* Scratch of sim_set: one cursor per unit line of a set. */
    const uint32_t **tm, **te;
    uint32_t *ln;
    uint32_t *hv;         /* each cursor's next time (UINT32_MAX: none) */
    sx_cand *cand;        /* lru_skip_to's: one per cursor and way */
    size_t nscratch;
    uint32_t *buf;        /* one set's lines in time order */
    size_t cbuf;
    size_t nunits;
    /* Per unit: lines, and the times each line is touched. */
    uint32_t *nlines;
    size_t **lstart;      /* nlines + 1 offsets into ltime */
    uint32_t **ltime;
    uint32_t *base;       /* start line of each unit */
    /* Per set: the accesses of no unit (time, line). */
    size_t *sstart;
    uint32_t *stime, *sline;
    /* Per set: unit lines in it. */
    sx_occ **occ;
    uint32_t *nocc, *cocc;
    double *miss;         /* per set, counted misses */
    double total;
    /* Undo of the last move (one or two units). */
    size_t undo_k[2];
    uint32_t undo_base[2];
    unsigned nundo;
    uint32_t *touched;    /* sets re-simulated by the last move */
    double *touched_old;
    double *tval;         /* their new figures */
    /* Under LRU, per set: the distinct lines of its static list, sorted
     * (sdl from sdstart[s]), for telling whether a line entering it is new
     * there. */
    uint32_t *sdl;
    size_t *sdstart;
    unsigned char *mark;  /* per set: in touched[] (touch's kind) */
    unsigned char *enter; /* per set: a moved unit's line enters it */
    size_t ntouched;
    /* The sets' states: an id per set, new whenever a change to the set is
     * kept (undo puts the old one back), unique over all sets and states;
     * touched_ver holds the ids of the last change's sets as they were.
     * Per unit line (memo_*[k][l]): the figure of the set it occupied in
     * state memo_ver, without its unit, from an earlier move of that unit
     * alone (0: none), which a move of the unit alone from the same state
     * takes instead of simulating the set again. */
    uint64_t *sver, vnext;
    uint64_t *touched_ver;
    uint64_t **memo_ver;
    double **memo_val;
    sx_front *front;      /* csim_setidx_new's, or NULL */
};

/* Frees x->front (setidx-map.c). */
void csim_setidx_map_free(csim_setidx *x);

#endif
