/*
 * What the CLI runs of this directory (ctl/cli/cmd_report.c, cmd_export.c,
 * cmd_record.c): the reports, the export, and the trace a report reads
 * when none is named. It declares nothing itself; each module's header
 * does. (Until those files include the headers they use.)
 */
#ifndef ST_REPORT_REPORTS_H
#define ST_REPORT_REPORTS_H

#include "ctl/report/export_chrome.h"
#include "ctl/report/latest.h"
#include "ctl/report/pass.h"
#include "ctl/report/report_io.h"
#include "ctl/report/report_locks.h"
#include "ctl/report/report_malloc.h"

#endif
