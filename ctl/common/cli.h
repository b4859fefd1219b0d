/*
 * The shimtrace command line: verbs, their options (the one source of both
 * --help and the man page), and helpers shared by the verbs.
 */
#ifndef ST_CTL_CLI_H
#define ST_CTL_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct st_opt {
	const char *name;  /* long option */
	char short_name;   /* 0 when none */
	const char *arg;   /* argument name, NULL for a flag; "[=NAME]" when
			    * optional (given as --name=VALUE only) */
	const char *help;  /* one line for --help */
	const char *more;  /* extra text for the man page, or NULL */
};

struct st_verb {
	const char *name;
	const char *synopsis; /* after "shimtrace VERB " */
	const char *summary;  /* one line */
	const char *description; /* man page paragraphs, each ended by \n but the last */
	const struct st_opt *opts; /* terminated by a zero entry */
	int (*run)(const struct st_verb *v, int argc, char **argv); /* argv[0]: the verb */
};

/* Whether o's argument may be left out ("[=NAME]"). */
static inline bool st_opt_arg_optional(const struct st_opt *o)
{
	return o->arg && o->arg[0] == '[';
}

/* shimtraced's options (name ""): its --help and man page. */
extern const struct st_verb st_daemon_verb;
/* "shimtrace" or "shimtraced": what errors and --help call us. */
extern const char *st_program;

/* Prints "shimtrace VERB: message" to stderr, as one line: escaped
 * (ctl/common/escape.h). */
void st_err(const char *verb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the --help text of a verb. */
void st_verb_help(const struct st_verb *v);
/*
 * getopt_long over v's table. Returns the option matched, NULL at the end,
 * or &st_opt_error on a bad option (after printing a one-line error).
 * `stop_at_operand` stops at the first operand (for `record -- COMMAND`).
 */
extern const struct st_opt st_opt_error;
const struct st_opt *st_getopt(const struct st_verb *v, int argc, char **argv,
			       bool stop_at_operand, const char **optarg_out);
int st_optind(void);
/* True when o is the option named `name`. */
bool st_opt_is(const struct st_opt *o, const char *name);
/* What every verb does with a parse error (status 2: st_getopt said why)
 * and --help (printed: status 0); -1 for any other option, the verb's. */
int st_opt_standard(const struct st_verb *v, const struct st_opt *o);
/* --pid's argument into *pid; -1 after saying why (verb's name first). */
int st_opt_pid(const char *verb, const char *arg, int32_t *pid);

/* "16M", "512k", "4096", "1G": bytes, or -1 when malformed. */
int64_t st_parse_size(const char *s);

/* "tsc" or "monotonic": an enum st_abi_clock, or -1. */
int st_parse_clock(const char *s, uint32_t *out);

/* Where the preload libraries are (and the JVM agent, beside the
 * wrappers): the build tree when run from it. */
const char *st_libdir_core(void);
const char *st_libdir_wrappers(void);

/* The umask of the user running the command: the modes of the traces made
 * for them (sent to the daemon, which has its own). */
mode_t st_user_umask(void);

/* An absolute path for path (relative to the current directory) into out
 * (n bytes): 0, or -1 when it does not fit. */
int st_absolute_path(const char *path, char *out, size_t n);

#endif
