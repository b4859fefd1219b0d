/*
 * shimtrace: the command-line tool. Dispatches to a verb.
 */
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "ctl/cli/verbs.h"
#include "ctl/common/cli.h"
#include "ctl/inspect/inspector.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: shimtrace VERB [OPTIONS] [ARGS]\n\nverbs:\n");
	for (const struct st_verb *v = st_verbs; v->name; v++)
		fprintf(f, "  %-10s %s\n", v->name, v->summary);
	fprintf(f, "\n`shimtrace VERB --help` describes a verb; man shimtrace(1) has the details.\n");
}

int main(int argc, char **argv)
{
	const struct st_verb *v;

	/* `record`'s daemon starts inspectors from this executable */
	st_inspector_dispatch(argc, argv);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("shimtrace %s\n", PACKAGE_VERSION);
		return 0;
	}
	v = st_verb_find(argv[1]);
	if (!v) {
		st_err(NULL, "unknown verb '%s' (see shimtrace --help)", argv[1]);
		return 2;
	}
	return v->run(v, argc - 1, argv + 1);
}
