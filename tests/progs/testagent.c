/*
 * libtestagent.so: a stand-in JVMTI agent for jvm-attach.test, which the
 * test installs as libshimtrace-jvm.so to check shimtrace's client of the
 * JVM's attach mechanism (ctl/inspect/jvmattach.c) by itself. It uses no
 * JVMTI: Agent_OnAttach appends one line to the file the JVM's
 * environment names in TESTAGENT_OUT,
 *
 *   attach options=OPTIONS core=yes|no
 *
 * core: whether libshimtrace.so is loaded in the JVM already (the attach
 * loads it first), and returns TESTAGENT_CODE (default 0).
 */
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int Agent_OnAttach(void *vm, char *options, void *reserved) __attribute__((visibility("default")));

static int find_core(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *slash = strrchr(info->dlpi_name, '/');

	(void)size;
	(void)arg;
	return strcmp(slash ? slash + 1 : info->dlpi_name, "libshimtrace.so") == 0;
}

int Agent_OnAttach(void *vm, char *options, void *reserved)
{
	const char *out = getenv("TESTAGENT_OUT"), *code = getenv("TESTAGENT_CODE");
	FILE *f = out ? fopen(out, "a") : NULL;

	(void)vm;
	(void)reserved;
	if (f) {
		fprintf(f, "attach options=%s core=%s\n", options ? options : "(null)",
			dl_iterate_phdr(find_core, NULL) ? "yes" : "no");
		fclose(f);
	}
	return code ? atoi(code) : 0;
}
