/*
 * shimtrace export --format perfetto (export_perfetto.c).
 */
#ifndef ST_REPORT_EXPORT_PERFETTO_H
#define ST_REPORT_EXPORT_PERFETTO_H

#include <stddef.h>
#include <stdio.h>

#include "ctl/report/timeline.h"

/* The trace as a Perfetto protobuf trace on out; 0, 1 when the trace
 * could not be read, with a one-line message in err, or 3 when it was
 * written but parts of the trace were skipped as damaged (said on
 * stderr). */
int st_export_perfetto(const struct st_export_opts *opts, FILE *out, char *err, size_t errlen);

#endif
