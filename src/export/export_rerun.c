/* Starting an export over when its table-order read broke start order (see export_rerun.h). */
#include "export/export_rerun.h"

#include <sys/stat.h>
#include <unistd.h>

int wl_export_rerun(wl_export_pass pass, wl_session *s, FILE *fp, const wl_tl_options *o, wl_export_stats *st,
                    char *err, size_t err_size)
{
    wl_tl_options opt = o ? *o : (wl_tl_options){0};
    struct stat sb;
    long start = ftell(fp);
    int fd = fileno(fp);
    opt.table_order = start >= 0 && fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode);
    int rc = pass(s, fp, &opt, st, err, err_size);
    st->restarted = 0;
    if (rc != WL_TL_RESTART)
        return rc;
    /* what was written came from rows whose order fell apart: none of it is kept */
    if (fflush(fp) || ftruncate(fd, (off_t)start) || fseek(fp, start, SEEK_SET)) {
        snprintf(err, err_size, "cannot cut the output back to start the export over");
        return -1;
    }
    opt.table_order = 0;
    rc = pass(s, fp, &opt, st, err, err_size);
    st->restarted = 1;
    return rc == WL_TL_RESTART ? -1 : rc; /* cannot happen: the index gives start order */
}
