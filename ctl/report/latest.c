/*
 * The most recent trace in the working directory (see latest.h).
 */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "ctl/report/latest.h"

/* A trace directory record made: shimtrace-YYYYMMDD-HHMMSS[-N], with its
 * metadata. Their names sort by time; ties (-N) by modification time. */
int st_report_latest(char *buf, size_t n)
{
	DIR *d = opendir(".");
	struct dirent *e;
	struct timespec best_t = { 0, 0 };
	char best[256] = "";

	if (!d)
		return -1;
	while ((e = readdir(d)) != NULL) {
		char meta[300];
		struct stat st;

		if (strncmp(e->d_name, "shimtrace-", 10) != 0 || strlen(e->d_name) >= sizeof(best))
			continue;
		snprintf(meta, sizeof(meta), "%s/metadata", e->d_name);
		if (stat(meta, &st) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (stat(e->d_name, &st) < 0)
			continue;
		if (!best[0] || strncmp(e->d_name, best, 25) > 0 ||
		    (strncmp(e->d_name, best, 25) == 0 &&
		     (st.st_mtim.tv_sec > best_t.tv_sec ||
		      (st.st_mtim.tv_sec == best_t.tv_sec && st.st_mtim.tv_nsec > best_t.tv_nsec)))) {
			snprintf(best, sizeof(best), "%s", e->d_name);
			best_t = st.st_mtim;
		}
	}
	closedir(d);
	if (!best[0])
		return -1;
	snprintf(buf, n, "%s", best);
	return 0;
}
