/*
 * libFuzzer harness for the trace reader (ctl/reader/) and the reports
 * built on it (ctl/report/): a trace is untrusted input, and every one
 * must be read whole or rejected with a message, never crash or read out
 * of bounds (run it with AddressSanitizer). See README.md here.
 *
 * The input is a trace: two bytes giving the metadata's length, the
 * metadata (CTF 1.8 text), then the bytes of one stream file. It is
 * written to a directory of its own (files are what the reader
 * reads), then read by every report, which also resolves call sites (with
 * no object to open: a trace's paths are left as they are).
 */
#include <limits.h>
#include <sys/stat.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/report/pass.h"
#include "ctl/report/report_io.h"
#include "ctl/report/report_locks.h"
#include "ctl/report/report_malloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[PATH_MAX];

static int put(const char *name, const uint8_t *p, size_t n)
{
	char path[PATH_MAX + 32];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int (*const reports[])(const struct st_report_opts *, FILE *, char *, size_t) = {
		st_report_locks, st_report_deadlocks, st_report_malloc, st_report_io,
	};
	struct st_report_opts opts = { .top = 0, .pid = -1 };
	size_t mlen;
	char err[1024];
	FILE *out;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz-reader-%d", (int)getpid());
		mkdir(dir, 0700);
	}
	if (size < 2)
		return 0;
	mlen = (size_t)data[0] | (size_t)data[1] << 8;
	if (mlen > size - 2)
		return 0;
	if (put("metadata", data + 2, mlen) < 0 || put("stream_0", data + 2 + mlen, size - 2 - mlen) < 0)
		abort();
	out = fopen("/dev/null", "w");
	opts.dir = dir;
	for (size_t i = 0; i < sizeof(reports) / sizeof(reports[0]); i++) {
		opts.json = i % 2;
		err[0] = '\0';
		/* a refusal must say why */
		if (reports[i](&opts, out, err, sizeof(err)) != 0 && !err[0])
			abort();
	}
	fclose(out);
	return 0;
}
