/* tgt internals shared by the parser and the loader. */
#ifndef CP_TARGET_INT_H
#define CP_TARGET_INT_H

#include "target/target.h"

/* A parsed target owns its memories and strings; t comes first, so a
 * tgt * from tgt_parse is a tgt_owned *. */
typedef struct tgt_owned {
    tgt t;
    tgt_mem mems[TGT_MAX_MEMS];
    cp_pool *pool;
} tgt_owned;

#endif
