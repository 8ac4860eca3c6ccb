/* User attributes from ATTR capture records (capfile.h): thread tiers go to tier_change, where
 * the identity pass (session_identity.c) gives each kernel its tier; an application thread id is
 * set on its scope (whose BEGIN record precedes it: both come from one thread, through one ring). */
#include "store/session_writer_internal.h"

int wl_imp_attr(import_ctx *c, const wlcap_attr *a, size_t offset)
{
    sqlite3_stmt *s;
    switch (a->kind) {
    case WLCAP_ATTR_TIER:
        s = wl_imp_begin(c, S_TIER);
        wl_imp_bind_u64(s, 1, c->pid);
        wl_imp_bind_u64(s, 2, a->tid);
        wl_imp_bind_u64(s, 3, a->timestamp);
        wl_imp_bind_str(c, s, 4, a->str); /* 0: cleared, NULL */
        return wl_imp_step(c, s);
    case WLCAP_ATTR_SCOPE_THREAD:
        s = wl_imp_begin(c, S_SCOPE_THREAD);
        wl_imp_bind_u64(s, 1, a->value);
        wl_imp_bind_u64(s, 2, c->pid);
        wl_imp_bind_u64(s, 3, a->scope_id);
        return wl_imp_step(c, s);
    default:
        return wl_store_set_err(c->err, c->err_size, "attribute record at offset %zu: unknown kind %u", offset,
                                a->kind);
    }
}
