/* The host cursor's sources read from the export pack (see session_cursors_internal.h): API calls
 * as they are packed (in the cursor's order already), NVTX ranges and scopes packed in start order
 * and put in the cursor's order here. Their statements order by start, then the end (a range never
 * closed ends at the session's end, which the caller knows and the pack does not) longest first,
 * pid, tid and id: so each run of equal starts (WL_PACK_MAX_GROUP rows at most) is read whole and
 * sorted by those keys, the end computed first. Rows come out in the statements' columns. */
#include <stdlib.h>
#include <string.h>

#include "store/row_pack.h"
#include "store/session_cursors_internal.h"

struct wl_cur_pack {
    wl_pack_reader *r;
    int kind;
    int64_t open_end;
    wl_pack_row *run; /* the run of equal starts, in the statement's columns and order */
    uint32_t n, at, cap;
    wl_pack_row ahead; /* the first row of the next run, read ahead (pack fields) */
    int state;         /* 0 nothing read ahead, 1 ahead holds a row, 2 the pack is done */
};

wl_cur_pack *wl_cur_pack_open(sqlite3 *db, int kind, int64_t open_end)
{
    char why[200];
    wl_pack_reader *r = wl_pack_open(db, kind, why, sizeof why);
    if (!r)
        return NULL;
    wl_cur_pack *p = calloc(1, sizeof *p);
    uint32_t cap = kind == WL_PACK_API ? 1 : wl_pack_max_group(r) + 1;
    if (!p || !(p->run = malloc((size_t)cap * sizeof *p->run))) {
        free(p);
        wl_pack_close(r);
        return NULL;
    }
    p->r = r, p->kind = kind, p->open_end = open_end, p->cap = cap;
    return p;
}

void wl_cur_pack_close(wl_cur_pack *p)
{
    if (!p)
        return;
    wl_pack_close(p->r);
    free(p->run);
    free(p);
}

const char *wl_cur_pack_error(const wl_cur_pack *p) { return wl_pack_error(p->r); }

/* A range's or scope's pack fields (pid, tid, start, end or NULL, id, name, domain or app
 * thread) as its statement's columns: 3 the end (open: the session's end; never before the
 * start), 5 the name, 6 the NVTX domain ("" for scopes), 7 open, 8 the scope's app thread. */
static void as_columns(const wl_cur_pack *p, wl_pack_row *row)
{
    int open = (int)(row->nulls >> 3 & 1);
    int64_t end = open ? p->open_end : row->v[3];
    row->v[3] = end > row->v[2] ? end : row->v[2];
    if (p->kind == WL_PACK_SCOPE) {
        row->v[8] = row->v[6];
        row->text[6] = "", row->len[6] = 0;
    }
    row->v[7] = open;
}

/* The statement's order within a run of one start: the end longest first, then pid, tid, id. */
static int run_cmp(const void *x, const void *y)
{
    static const int KEYS[] = {0, 1, 4};
    const wl_pack_row *a = x, *b = y;
    if (a->v[3] != b->v[3])
        return a->v[3] > b->v[3] ? -1 : 1;
    for (int k = 0; k < 3; k++)
        if (a->v[KEYS[k]] != b->v[KEYS[k]])
            return a->v[KEYS[k]] < b->v[KEYS[k]] ? -1 : 1;
    return 0;
}

/* The next run into p->run: 1, 0 at the end, -1 damaged. */
static int next_run(wl_cur_pack *p)
{
    p->n = p->at = 0;
    if (p->state == 2)
        return 0;
    if (p->kind == WL_PACK_API) { /* in order already: a run of one, decoded in place */
        int got = wl_pack_next(p->r, &p->run[0]);
        if (got <= 0) {
            p->state = 2;
            return got;
        }
        p->n = 1;
        return 1;
    }
    if (p->state == 0) {
        int got = wl_pack_next(p->r, &p->ahead);
        if (got <= 0) {
            p->state = 2;
            return got;
        }
    }
    for (;;) {
        if (p->n == p->cap) /* the reader holds runs to max_group: cannot happen */
            return -1;
        p->run[p->n++] = p->ahead;
        int got = wl_pack_next(p->r, &p->ahead);
        if (got < 0)
            return -1;
        p->state = got ? 1 : 2;
        if (!got || p->ahead.v[2] != p->run[0].v[2])
            break;
    }
    for (uint32_t i = 0; i < p->n; i++)
        as_columns(p, &p->run[i]);
    if (p->n > 1)
        qsort(p->run, p->n, sizeof *p->run, run_cmp);
    return 1;
}

int wl_cur_pack_next(wl_cur_pack *p, const wl_pack_row **row)
{
    if (p->at == p->n) {
        int r = next_run(p);
        if (r <= 0)
            return r;
    }
    *row = &p->run[p->at++];
    return 1;
}
