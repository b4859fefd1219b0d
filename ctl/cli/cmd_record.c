/*
 * shimtrace record: run a command under a private session daemon and write
 * its trace.
 *
 * Everything that can be checked is checked before the command runs (the
 * options, the patterns against the known tracepoints, the output
 * directory, the command itself), so a mistake never costs a run. The
 * daemon code is the one shimtraced uses; here it runs in this process,
 * listening in a private directory that the command finds through
 * SHIMTRACE_RUNDIR, while the command runs with the libraries preloaded.
 *
 * record and its command are one job: a signal record gets is passed on to
 * the command (daemon.c), and the one it cannot catch, SIGKILL, reaches the
 * command through the kernel (PR_SET_PDEATHSIG), so that the command never
 * runs on untraced after record is gone. The private directory of a record
 * killed that way is removed by the next record (rundir_sweep).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "core/abi.h"
#include "shimtrace/tracepoint.h"
#include "ctl/common/catalog.h"
#include "ctl/common/relayurl.h"
#include "ctl/daemon/out/relaylive.h"
#include "ctl/common/checks.h"
#include "ctl/cli/cmd_record.h"
#include "ctl/cli/probeopts.h"
#include "ctl/cli/record_attach.h"
#include "ctl/common/attachlibs.h"
#include "ctl/cli/relayopts.h"
#include "ctl/common/cli.h"
#include "ctl/report/demangle.h"
#include "ctl/common/control.h"
#include "ctl/common/defaults.h"
#include "ctl/common/escape.h"
#include "ctl/daemon/base/log.h"
#include "ctl/daemon/daemon.h"
#include "ctl/daemon/drain/lifecycle.h"
#include "ctl/daemon/loop/reactor.h"
#include "ctl/daemon/model/session.h"
#include "ctl/daemon/model/state.h"
#include "ctl/report/report_locks.h"

extern char **environ;

/* The wrapper families (the providers of the catalog), and which are
 * interposed. */
#define MAX_FAMILIES 16
#define ST_RECORD_MAX_PIDS 64

struct families {
	const char *name[MAX_FAMILIES];
	bool wrapped[MAX_FAMILIES];
	bool agent[MAX_FAMILIES]; /* loaded by the JVM, not preloaded */
	size_t n;
};

struct record {
	const char *outdir;
	const char *wrap;	  /* --wrap, NULL: the default */
	const char *set_url;	  /* --set-url: to a relay daemon */
	const char *ctrl_url, *data_url; /* or these two */
	bool streams;		  /* one of them: r->relay is where */
	struct st_relay_url relay;
	const char *relay_session; /* its name of the session */
	struct st_relaylive_stats sent; /* what went there */
	uint32_t stack;		  /* --stack: frames at each wait */
	uint64_t stack_sample;	  /* --stack-sample: bytes between allocation stacks */
	const char **patterns;
	int npatterns;
	const char **disables;	  /* disabled after the patterns: on request only */
	int ndisables;
	bool lock_order;	  /* --lock-order: jvm:monitor_held too */
	bool overwrite, quiet;
	uint32_t block_ms;	  /* --blocking (ctl/common/checks.h), 0 without */
	uint32_t buffers;	  /* --buffers: enum st_abi_buffers */
	bool blocking_bare;	  /* --blocking without =TIMEOUT */
	uint64_t buffer_size, subbuf_size, max_memory, process_memory;
	uint32_t clock;
	struct st_probe_opt probes[ST_PROBES_MAX]; /* --function, --probe */
	int nprobes;
	char command[PATH_MAX];
	char **argv;
	pid_t pids[ST_RECORD_MAX_PIDS]; /* --pid: processes to attach to, not a command */
	size_t npids;
	pid_t child;
	int status;
	bool exited;
	struct st_daemon *d;	   /* its private instance */
	struct st_watch child_watch; /* the command's pidfd */
};

static const char *V = "record";

static int parse_size_opt(const char *name, const char *arg, uint64_t *out)
{
	int64_t v = st_parse_size(arg);

	if (v <= 0) {
		st_err(V, "--%s: '%s' is not a size (examples: 4096, 64k, 16M, 1G)", name, arg);
		return -1;
	}
	*out = (uint64_t)v;
	return 0;
}

static int parse_args(const struct st_verb *v, struct record *r, int argc, char **argv)
{
	const struct st_opt *o;
	const char *arg;
	char why[256];
	uint32_t ms;

	while ((o = st_getopt(v, argc, argv, true, &arg)) != NULL) {
		if (o == &st_opt_error)
			return -1;
		if (st_opt_is(o, "output")) {
			r->outdir = arg;
		} else if (st_opt_is(o, "wrap")) {
			r->wrap = arg;
		} else if (st_opt_is(o, "ctrl-url")) {
			r->ctrl_url = arg;
		} else if (st_opt_is(o, "data-url")) {
			r->data_url = arg;
		} else if (st_opt_is(o, "set-url")) {
			r->set_url = arg;
		} else if (st_opt_is(o, "event")) {
			r->patterns[r->npatterns++] = arg;
		} else if (st_opt_is(o, "lock-order")) {
			r->lock_order = true;
		} else if (st_opt_is(o, "function") || st_opt_is(o, "probe")) {
			if (r->nprobes == ST_PROBES_MAX) {
				st_err(V, "at most %d --function and --probe options", ST_PROBES_MAX);
				return -1;
			}
			if (st_probe_opt_parse(V, st_opt_is(o, "function"), arg,
					       &r->probes[r->nprobes++]) < 0)
				return -1;
		} else if (st_opt_is(o, "pid")) {
			if (st_pid_list_parse(arg, r->pids, ST_RECORD_MAX_PIDS, &r->npids, why,
					      sizeof(why)) < 0) {
				st_err(V, "--pid: %s", why);
				return -1;
			}
		} else if (st_opt_is(o, "quiet")) {
			r->quiet = true;
		} else if (st_opt_is(o, "no-demangle")) {
			st_demangle_names = false;
		} else if (st_opt_is(o, "stack")) {
			char *end;
			unsigned long n = strtoul(arg, &end, 10);

			if (!*arg || *end || arg[0] == '-' || n > ST_STACK_MAX) {
				st_err(V, "--stack: '%s' is not a number of frames from 0 to %d", arg,
				       ST_STACK_MAX);
				return -1;
			}
			r->stack = (uint32_t)n;
		} else if (st_opt_is(o, "stack-sample")) {
			/* (a size of 0 is refused there) */
			if (parse_size_opt(o->name, arg, &r->stack_sample) < 0)
				return -1;
		} else if (st_opt_is(o, "help")) {
			st_verb_help(v);
			exit(0);
		} else if (st_opt_is(o, "overwrite")) {
			r->overwrite = true;
		} else if (st_opt_is(o, "blocking")) {
			if (st_blocking_parse(arg, &r->block_ms, why, sizeof(why)) < 0) {
				st_err(V, "%s", why);
				return -1;
			}
			r->blocking_bare = !arg;
		} else if (st_opt_is(o, "buffers")) {
			if (st_buffers_parse(arg, &r->buffers, why, sizeof(why)) < 0) {
				st_err(V, "%s", why);
				return -1;
			}
		} else if (st_opt_is(o, "buffer-size")) {
			if (parse_size_opt(o->name, arg, &r->buffer_size) < 0)
				return -1;
		} else if (st_opt_is(o, "subbuf-size")) {
			if (parse_size_opt(o->name, arg, &r->subbuf_size) < 0)
				return -1;
		} else if (st_opt_is(o, "max-memory")) {
			if (parse_size_opt(o->name, arg, &r->max_memory) < 0)
				return -1;
		} else if (st_opt_is(o, "process-memory")) {
			if (parse_size_opt(o->name, arg, &r->process_memory) < 0)
				return -1;
		} else if (st_opt_is(o, "clock")) {
			if (st_parse_clock(arg, &r->clock) < 0) {
				st_err(V, "--clock: '%s' is neither tsc nor monotonic", arg);
				return -1;
			}
		}
	}
	if (r->npids && st_optind() < argc) {
		st_err(V, "--pid attaches to running processes: no COMMAND with it ('%s')",
		       argv[st_optind()]);
		return -1;
	}
	if (!r->npids && st_optind() >= argc) {
		st_err(V, "missing COMMAND (usage: shimtrace record [OPTIONS] -- COMMAND [ARGS...], "
			  "or record [OPTIONS] --pid PID[,PID...])");
		return -1;
	}
	r->argv = argv + st_optind();
	if (st_blocking_check(r->overwrite ? ST_MODE_OVERWRITE : ST_MODE_DISCARD, r->block_ms, why,
			      sizeof(why)) < 0) {
		st_err(V, "%s", why);
		return -1;
	}
	/* "--blocking 2s -- cmd" would run a command named 2s */
	if (r->blocking_bare && !r->npids && st_blocking_parse(r->argv[0], &ms, why, sizeof(why)) == 0) {
		st_err(V, "--blocking takes its TIMEOUT after an '=': --blocking=%s", r->argv[0]);
		return -1;
	}
	return 0;
}

/* The families the catalog knows, in its order (the JVM's among them: an
 * agent the JVM loads, not a preload library). */
static void families_known(struct families *f)
{
	memset(f, 0, sizeof(*f));
	for (unsigned k = 0; k < st_catalog_count; k++) {
		size_t i = 0;

		while (i < f->n && strcmp(f->name[i], st_catalog[k].provider) != 0)
			i++;
		if (i == f->n && f->n < MAX_FAMILIES) {
			f->agent[f->n] = st_catalog[k].agent;
			f->name[f->n++] = st_catalog[k].provider;
		}
	}
}

/* Whether this build has the agent of a family that is one (configure
 * builds the JVM's when it finds a JDK). */
static bool agent_built(const char *name)
{
#ifdef ST_JVM_AGENT
	return strcmp(name, ST_JVM_FAMILY) == 0;
#else
	(void)name;
	return false;
#endif
}

/* Marks the families of --wrap LIST (comma-separated, or all). */
static int families_choose(struct families *f, const char *list)
{
	const char *p = list;

	if (strcmp(list, "all") == 0) {
		for (size_t i = 0; i < f->n; i++)
			f->wrapped[i] = !f->agent[i] || agent_built(f->name[i]);
		return 0;
	}
	for (;;) {
		size_t len = strcspn(p, ","), i = 0;

		while (i < f->n && (strlen(f->name[i]) != len || strncmp(f->name[i], p, len) != 0))
			i++;
		if (i == f->n) {
			char known[256] = "";

			for (size_t k = 0; k < f->n; k++)
				snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
					 k ? ", " : "", f->name[k]);
			st_err(V, "--wrap: no family '%.*s' (families: %s, or all)", (int)len, p,
			       known);
			return -1;
		}
		if (f->agent[i] && !agent_built(f->name[i])) {
			st_err(V, "--wrap %s: the JVM agent libshimtrace-%s.so was not built (configure "
				  "found no JDK: install openjdk-17-jdk-headless and configure again)",
			       f->name[i], f->name[i]);
			return -1;
		}
		f->wrapped[i] = true;
		if (!p[len])
			return 0;
		p += len + 1;
	}
}

static bool family_wrapped(const struct families *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->wrapped[i] && strcmp(f->name[i], name) == 0)
			return true;
	return false;
}

/* A pattern matching tracepoints of families not wrapped, and none of
 * those wrapped, says which --wrap it needs; one naming a family's
 * provider but none of its tracepoints is a typo. One matching no
 * family's is accepted: the program or a library it loads may declare it
 * (its own provider); unmatched_report says after the run if nothing
 * matched. */
static int check_patterns(struct record *r, const struct families *f)
{
	for (int i = 0; i < r->npatterns; i++) {
		const char *other = NULL;
		bool any = false;
		char why[512];

		if (st_pattern_check(r->patterns[i], why, sizeof(why)) < 0) {
			st_err(V, "pattern '%s': %s", r->patterns[i], why);
			return -1;
		}
		if (st_catalog_typo(r->patterns[i], why, sizeof(why))) {
			st_err(V, "%s", why);
			return -1;
		}
		for (unsigned k = 0; k < st_catalog_count && !any; k++) {
			if (!st_catalog_match(&st_catalog[k], r->patterns[i]))
				continue;
			if (family_wrapped(f, st_catalog[k].provider))
				any = true;
			else if (!other)
				other = st_catalog[k].provider;
		}
		if (!any && other) {
			st_err(V, "pattern '%s' matches tracepoints of the %s family, which is not "
				  "wrapped (add --wrap %s)",
			       r->patterns[i], other, other);
			return -1;
		}
	}
	return 0;
}

/* The answer at once: the top of `report locks` on the trace just written. */
static void locks_top(const char *dir)
{
	char err[512];

	if (st_report_locks_top(dir, 3, "shimtrace record: ", stderr, err, sizeof(err)) != 0)
		fprintf(stderr, "shimtrace record: cannot report on the locks: %s\n", err);
}

/* The patterns that selected no tracepoint of any recorded process. */
static void unmatched_report(const struct st_session *ses)
{
	for (uint32_t i = 0; i < ses->nrules; i++)
		if (ses->rules[i].enable && !ses->rules[i].matched)
			fprintf(stderr,
				"shimtrace record: pattern '%s' matched no tracepoint of the recorded "
				"processes\n",
				ses->rules[i].pattern);
}

static bool executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* Resolves the command like a shell would; 127/126 as a shell exits. */
static int find_command(struct record *r)
{
	const char *cmd = r->argv[0], *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		if (executable_file(cmd)) {
			snprintf(r->command, sizeof(r->command), "%s", cmd);
			return 0;
		}
		st_err(V, "cannot run %s: %s", cmd,
		       access(cmd, F_OK) == 0 ? "not an executable file" : "no such file");
		return access(cmd, F_OK) == 0 ? 126 : 127;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(r->command, sizeof(r->command), "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (executable_file(r->command))
			return 0;
		path += n + (path[n] == ':');
	}
	st_err(V, "command not found: %s", cmd);
	return 127;
}

/*
 * Whether path is an ELF program with no interpreter (PT_INTERP): linked
 * statically (or static-pie), so ld.so never runs in it and no preloaded
 * library can interpose its calls. Anything else (a script, a dynamic
 * program, a file that cannot be read) is left to run.
 */
static bool statically_linked(const char *path)
{
	unsigned char h[64];
	bool is64, interp = false;
	uint64_t phoff;
	uint16_t phnum, phentsize;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG) != 0 ||
	    (h[EI_CLASS] != ELFCLASS64 && h[EI_CLASS] != ELFCLASS32) || h[EI_DATA] != ELFDATA2LSB) {
		close(fd);
		return false;
	}
	is64 = h[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr e;

		memcpy(&e, h, sizeof(e));
		phoff = e.e_phoff, phnum = e.e_phnum, phentsize = e.e_phentsize;
	} else {
		Elf32_Ehdr e;

		memcpy(&e, h, sizeof(e));
		phoff = e.e_phoff, phnum = e.e_phnum, phentsize = e.e_phentsize;
	}
	if (phentsize < (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)) || phnum == 0) {
		close(fd);
		return false;
	}
	for (uint16_t i = 0; i < phnum && !interp; i++) {
		unsigned char ph[sizeof(Elf64_Phdr)];
		uint32_t type;

		if (pread(fd, ph, sizeof(uint32_t), (off_t)(phoff + (uint64_t)i * phentsize)) !=
		    (ssize_t)sizeof(uint32_t)) {
			close(fd);
			return false; /* (a short file: not ours to judge) */
		}
		memcpy(&type, ph, sizeof(type)); /* (p_type comes first in both) */
		interp = type == PT_INTERP;
	}
	close(fd);
	return !interp;
}

/* The command, for say_escalation. */
static pid_t escalated_pid;

/* Said before a further interrupt ends the command (daemon.c). */
static void say_escalation(int sig)
{
	fprintf(stderr,
		sig == SIGTERM ? "shimtrace record: second interrupt: sending SIGTERM to the command "
				 "(pid %d); a third sends SIGKILL\n"
			       : "shimtrace record: interrupted again: sending SIGKILL to the command "
				 "(pid %d)\n",
		(int)escalated_pid);
}

/* Removes the trace directory dir and its files (ours: only regular
 * files, dotfiles too; no link followed): 0, or -1. */
static int remove_trace(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((e = readdir(d)))
		if (e->d_type == DT_REG)
			unlinkat(fd, e->d_name, 0);
	closedir(d);
	return rmdir(dir);
}

/* --set-url, once the trace is complete: what is left goes to the relay
 * daemon (one away is waited for RELAY_END_WAIT_MS), its figures into
 * r->sent. */
#define RELAY_END_WAIT_MS 5000
static void relay_end(struct record *r, struct st_session *ses)
{
	st_relaylive_end(ses->relay, RELAY_END_WAIT_MS);
	/* (sending what is written runs at the network's pace: no bound) */
	while (!st_relaylive_wait(ses->relay, 1000))
		;
	st_relaylive_stats(ses->relay, &r->sent);
}

/* What --set-url sent, for the summary (as record's other lines, on
 * stderr). */
static void relay_summary(const struct record *r, const char *spool)
{
	const struct st_relaylive_stats *st = &r->sent;
	char size[32];

	st_size_approx(st->bytes, size, sizeof(size));
	if (st->sessions)
		fprintf(stderr, "shimtrace record: trace streamed to the relay daemon at %s: %s "
				"(%" PRIu64 " packets, %s)\n",
			r->relay.host, st->path, st->packets, size);
	if (st->sessions > 1)
		fprintf(stderr, "shimtrace record: the relay daemon was lost and came back: the trace "
				"is in %u of its sessions, the latest above\n",
			st->sessions);
	if (st->lost)
		fprintf(stderr, "shimtrace record: %" PRIu64 " packet%s lost sending to the relay "
				"daemon (%s): the whole trace is kept in %s\n",
			st->lost, st->lost == 1 ? "" : "s", st->err[0] ? st->err : "not said written",
			spool);
}

static void default_outdir(char *buf, size_t n)
{
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, n, "shimtrace-%s", stamp);
	for (int i = 2; access(buf, F_OK) == 0 && i < 1000; i++)
		snprintf(buf, n, "shimtrace-%s-%d", stamp, i);
}

/* The variables of the command's environment that record sets. */
#define OURS 6
static const char *const ours[OURS] = { "LD_PRELOAD=", "SHIMTRACE_RUNDIR=", "SHIMTRACE_STACK_DEPTH=",
					"SHIMTRACE_STACK_SAMPLE=", "SHIMTRACE_PROBES=",
					"JAVA_TOOL_OPTIONS=" };

static bool is_ours(const char *var)
{
	for (int i = 0; i < OURS; i++)
		if (strncmp(var, ours[i], strlen(ours[i])) == 0)
			return true;
	return false;
}

/*
 * The command's environment: our libraries first in LD_PRELOAD, the
 * stack depth and sampling (the user's sampling when --stack-sample is
 * not given), and with agent (the JVM agent's path, or NULL) its
 * -agentpath after the user's JAVA_TOOL_OPTIONS, which every JVM the
 * command starts reads. Its entries that are_ours are allocated: free_env
 * frees them and the array.
 */
static char **child_env(const char *preload, const char *rundir, uint32_t stack, uint64_t sample,
			const char *probes, const char *agent)
{
	size_t n = 0, k = 0;
	char **env;
	const char *old = getenv("LD_PRELOAD"), *user_sample = getenv("SHIMTRACE_STACK_SAMPLE"),
		   *java = getenv("JAVA_TOOL_OPTIONS");
	char *v[OURS] = { NULL };

	while (environ[n])
		n++;
	env = calloc(n + OURS + 1, sizeof(*env));
	if (!env || asprintf(&v[0], "LD_PRELOAD=%s%s%s", preload, old && *old ? ":" : "",
			     old ? old : "") < 0 ||
	    asprintf(&v[1], "SHIMTRACE_RUNDIR=%s", rundir) < 0 ||
	    asprintf(&v[2], "SHIMTRACE_STACK_DEPTH=%" PRIu32, stack) < 0 ||
	    (sample ? asprintf(&v[3], "SHIMTRACE_STACK_SAMPLE=%" PRIu64, sample)
		    : asprintf(&v[3], "SHIMTRACE_STACK_SAMPLE=%s", user_sample ? user_sample : "")) < 0 ||
	    asprintf(&v[4], "SHIMTRACE_PROBES=%s", probes) < 0 ||
	    (agent ? asprintf(&v[5], "JAVA_TOOL_OPTIONS=%s%s-agentpath:%s", java ? java : "",
			      java && *java ? " " : "", agent)
		   : java ? asprintf(&v[5], "JAVA_TOOL_OPTIONS=%s", java) : 0) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!is_ours(environ[i]))
			env[k++] = environ[i];
	for (int i = 0; i < OURS; i++)
		if (v[i])
			env[k++] = v[i];
	env[k] = NULL;
	return env;
}

static void free_env(char **env)
{
	for (size_t i = 0; env[i]; i++)
		if (is_ours(env[i]))
			free(env[i]);
	free(env);
}

/*
 * The private run directory, TMPDIR/shimtrace-record-XXXXXX (0700), holds
 * the daemon's socket, its "active" flag and LOCK_NAME, which the record
 * that made the directory holds locked (flock) for as long as it lives: a
 * lock nobody holds is a dead record's. The lock file is locked before it
 * gets its name, so a directory whose LOCK_NAME can be locked is never a
 * live record's.
 */
#define RUNDIR_PREFIX "shimtrace-record-"
#define LOCK_NAME "record.lock"

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

/* What a record leaves in its directory (the daemon's files, the lock). */
static void rundir_empty(int dirfd)
{
	static const char *const names[] = { ST_PROC_SOCKET, ST_ABI_ACTIVE_NAME,
					      ST_ABI_ACTIVE_NAME ".new", LOCK_NAME };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlinkat(dirfd, names[i], 0);
}

/* Creates the directory and takes its lock; returns the lock's descriptor. */
static int rundir_make(char *dir, size_t n)
{
	int dfd, lfd;

	snprintf(dir, n, "%s/" RUNDIR_PREFIX "XXXXXX", tmp_dir());
	if (!mkdtemp(dir))
		return -errno;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	lfd = dfd < 0 ? -1 : openat(dfd, LOCK_NAME ".new", O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (lfd < 0 || flock(lfd, LOCK_EX) < 0 || renameat(dfd, LOCK_NAME ".new", dfd, LOCK_NAME) < 0) {
		int e = errno;

		if (lfd >= 0)
			close(lfd);
		if (dfd >= 0) {
			unlinkat(dfd, LOCK_NAME ".new", 0);
			close(dfd);
		}
		rmdir(dir);
		return -e;
	}
	dprintf(lfd, "%d\n", (int)getpid());
	close(dfd);
	return lfd;
}

static void rundir_remove(const char *dir, int lockfd)
{
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd >= 0) {
		rundir_empty(dfd);
		close(dfd);
	}
	rmdir(dir);
	close(lockfd);
}

/*
 * Removes the private directories of dead records: only directories (no
 * symbolic link is followed) of our user whose lock nobody holds, and only
 * the files a record leaves there: a directory holding anything else stays.
 */
static void rundir_sweep(void)
{
	DIR *tmp = opendir(tmp_dir());
	struct dirent *e;

	if (!tmp)
		return;
	while ((e = readdir(tmp)) != NULL) {
		struct stat st;
		int dfd, lfd;

		if (strncmp(e->d_name, RUNDIR_PREFIX, strlen(RUNDIR_PREFIX)) != 0)
			continue;
		dfd = openat(dirfd(tmp), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			continue;
		lfd = fstat(dfd, &st) == 0 && st.st_uid == geteuid()
			      ? openat(dfd, LOCK_NAME, O_RDWR | O_NOFOLLOW | O_CLOEXEC)
			      : -1;
		if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0) {
			rundir_empty(dfd);
			unlinkat(dirfd(tmp), e->d_name, AT_REMOVEDIR);
		}
		if (lfd >= 0)
			close(lfd);
		close(dfd);
	}
	closedir(tmp);
}

/* Starts the command; -errno of a failed exec is reported through a pipe. */
static int spawn(struct record *r, char **env)
{
	int pfd[2], err = 0;
	ssize_t n;

	pid_t parent = getpid();

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	r->child = fork();
	if (r->child < 0)
		return -errno;
	if (r->child == 0) {
		sigset_t none;

		/* If record dies of SIGKILL, so does the command (the signal
		 * comes when the thread that forked ends: our main thread, which
		 * lives as long as record). A record already gone: the same. A
		 * setuid command loses this at exec (the kernel clears it). */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
			raise(SIGKILL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		close(pfd[0]);
		execve(r->command, r->argv, env);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(err)) {
		waitpid(r->child, NULL, 0);
		return -err;
	}
	return 0;
}

static void on_child(struct st_loop *l, void *arg, uint32_t events)
{
	struct record *r = arg;
	int status;

	(void)events;
	if (waitpid(r->child, &status, WNOHANG) != r->child)
		return;
	r->exited = true;
	r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	st_daemon_quit(r->d);
	/* (its pidfd stays readable: the loop may turn on, to settle) */
	st_watch_del(l, &r->child_watch);
}

/* Processes listed one per line; the others (a shell script's many short
 * commands) are folded into one line, but for any that lost events. */
#define SUMMARY_ROWS 10

/* Process i's line and those of the images it exec'd ("  exec NAME"),
 * the name column w wide; its corrupt bytes added to *corrupt. */
static void summary_process(const struct st_session *ses, uint32_t i, int w, uint64_t *corrupt)
{
	const struct st_session_stats *st = &ses->stats[i];

	for (uint32_t k = i; k < ses->nstats; k++) {
		const struct st_session_stats *im = &ses->stats[k];
		char name[ST_ESC_SIZE(sizeof(im->name)) + 8], pid[16] = "";

		if (k != i && (im->pid != st->pid || im->ppid != st->ppid))
			continue;
		if (k == i)
			snprintf(pid, sizeof(pid), "%d", im->pid);
		/* (what the process says of itself: escaped) */
		snprintf(name, sizeof(name), "%s", k == i ? "" : "  exec ");
		st_esc_cat(name, sizeof(name), im->name);
		fprintf(stderr, "shimtrace record: %-8s %-*s %12llu %10llu%s\n", pid, w, name,
			(unsigned long long)im->events, (unsigned long long)(im->lost + im->write_lost),
			im->corrupt_bytes ? "  (corrupt data dropped)" : "");
		*corrupt += im->corrupt_bytes;
	}
}

/* The width of the process names of the summary, escaped: 16 to 40. */
static int summary_width(const struct st_session *ses)
{
	int w = 16;

	for (uint32_t i = 0; i < ses->nstats; i++) {
		char name[ST_ESC_SIZE(sizeof(ses->stats[i].name)) + 8];
		int n;

		snprintf(name, sizeof(name), "%s", st_session_stats_exec(ses, i) ? "  exec " : "");
		st_esc_cat(name, sizeof(name), ses->stats[i].name);
		n = (int)strlen(name);
		w = n > w ? n : w;
	}
	return w < 40 ? w : 40;
}

static void summary(struct st_daemon *d, struct st_session *ses, const struct record *r)
{
	uint64_t corrupt = 0, more_events = 0, more_lost = 0;
	uint32_t shown = 0, more = 0;
	struct st_session_totals t;
	char size[32], buffers[256], losses[1024], memory[512];
	char dir[ST_ESC_SIZE(sizeof(ses->trace.dir))];
	int w = summary_width(ses);

	fprintf(stderr, "shimtrace record: %-8s %-*s %12s %10s\n", "pid", w, "process", "events",
		"lost");
	/* each process, then the images it exec'd, as "exec NAME" */
	for (uint32_t i = 0; i < ses->nstats; i++) {
		const struct st_session_stats *st = &ses->stats[i];

		if (st_session_stats_exec(ses, i))
			continue;
		/* (pid 0: a user's buffers, --buffers per-user, whose losses are
		 * the user's processes': said when there are some) */
		if (st->pid == 0) {
			if (st->lost + st->write_lost + st->corrupt_bytes)
				fprintf(stderr, "shimtrace record: %-8s %-*s %12s %10llu%s\n", "-", w,
					"(user buffers)", "-",
					(unsigned long long)(st->lost + st->write_lost),
					st->corrupt_bytes ? "  (corrupt data dropped)" : "");
			corrupt += st->corrupt_bytes;
			continue;
		}
		if (shown < SUMMARY_ROWS || st->lost + st->write_lost + st->corrupt_bytes) {
			summary_process(ses, i, w, &corrupt);
			shown++;
			continue;
		}
		for (uint32_t k = i; k < ses->nstats; k++)
			if (k == i || (ses->stats[k].pid == st->pid && ses->stats[k].ppid == st->ppid)) {
				more_events += ses->stats[k].events;
				more_lost += ses->stats[k].lost + ses->stats[k].write_lost;
			}
		more++;
	}
	if (more) {
		char folded[48];

		snprintf(folded, sizeof(folded), "%u more process%s", more, more == 1 ? "" : "es");
		fprintf(stderr,
			"shimtrace record: %-8s %-*s %12llu %10llu  (shimtrace view --pid PID shows "
			"one)\n",
			"", w, folded, (unsigned long long)more_events, (unsigned long long)more_lost);
	}
	st_session_totals(ses, &t);
	st_size_approx(__atomic_load_n(&ses->trace.wloss.bytes, __ATOMIC_RELAXED), size, sizeof(size));
	fprintf(stderr, "shimtrace record: %llu events recorded, %llu lost, from %u process%s\n",
		(unsigned long long)t.events, (unsigned long long)t.lost, t.processes,
		t.processes == 1 ? "" : "es");
	if (t.write_lost)
		fprintf(stderr, "shimtrace record: %llu events were lost writing the trace: %s\n",
			(unsigned long long)t.write_lost, strerror(t.write_err));
	st_session_loss_report(ses, "shimtrace record: ", losses, sizeof(losses));
	fputs(losses, stderr);
	if (corrupt)
		fprintf(stderr, "shimtrace record: %llu bytes of invalid records were dropped\n",
			(unsigned long long)corrupt);
	if (r->streams)
		relay_summary(r, st_esc(dir, sizeof(dir), ses->trace.dir));
	else
		fprintf(stderr, "shimtrace record: trace written to %s (%s)\n",
			st_esc(dir, sizeof(dir), ses->trace.dir), size);
	st_session_buffers_text(ses, buffers, sizeof(buffers));
	fprintf(stderr, "shimtrace record: buffers of %s\n", buffers);
	st_session_memory_text(d, ses, false, memory, sizeof(memory));
	fprintf(stderr, "shimtrace record: buffer memory: %s\n", memory);
}

/* The libraries to attach, or to preload but the first (attachlibs.h),
 * and with probes the dynamic probe library last: 0, or -1 after an
 * error message. */
static int libraries_of(const struct families *fam, bool probes, struct st_attach_libs *l)
{
	const char *wrapped[MAX_FAMILIES];
	uint32_t n = 0;
	char why[PATH_MAX + 128];

	for (size_t f = 0; f < fam->n; f++)
		if (fam->wrapped[f] && !fam->agent[f])
			wrapped[n++] = fam->name[f];
	if (st_attach_libs(st_libdir_core(), st_libdir_wrappers(), wrapped, n, l, why,
			   sizeof(why)) < 0) {
		st_err(V, "%s", why);
		return -1;
	}
	if (probes && l->n < ST_ATTACH_LIBS_MAX) {
		snprintf(l->path[l->n], PATH_MAX, "%s/libshimtrace-dynprobe.so", st_libdir_wrappers());
		if (access(l->path[l->n], R_OK) < 0) {
			st_err(V, "cannot find %s: %s", l->path[l->n], strerror(errno));
			return -1;
		}
		l->p[l->n] = l->path[l->n];
		l->n++;
	}
	return 0;
}

/* The JVM agent's absolute path into agent (a JVM gets it in its
 * JAVA_TOOL_OPTIONS) when the jvm family is wrapped, else "": 0, or -1
 * after an error message. */
static int agent_of(const struct families *fam, char *agent, size_t n)
{
	char rel[PATH_MAX], why[PATH_MAX + 128];

	agent[0] = '\0';
	if (!family_wrapped(fam, ST_JVM_FAMILY))
		return 0;
	if (st_jvm_agent(st_libdir_wrappers(), rel, why, sizeof(why)) < 0) {
		st_err(V, "%s", why);
		return -1;
	}
	if (st_absolute_path(rel, agent, n) < 0) {
		st_err(V, "cannot find %s: %s", rel, strerror(errno));
		return -1;
	}
	/* (the JVM splits JAVA_TOOL_OPTIONS at white space) */
	if (strpbrk(agent, " \t\n")) {
		st_err(V, "cannot give the JVM %s: its path has white space", agent);
		return -1;
	}
	return 0;
}

/* The preload list: the core and the families. */
static void preload_of(const struct st_attach_libs *l, char *preload, size_t n)
{
	preload[0] = '\0';
	for (uint32_t i = 1; i < l->n; i++)
		snprintf(preload + strlen(preload), n - strlen(preload), "%s%s", i > 1 ? ":" : "",
			 l->p[i]);
}

/* record's one session, made with its options and rules, and started; NULL
 * with the reason in err. */
static struct st_session *session_start(struct st_daemon *d, const struct record *r, char *err,
					size_t errlen)
{
	struct st_session_config scfg = {
		.name = "record",
		.outdir = r->outdir,
		.mode = r->overwrite ? ST_MODE_OVERWRITE : ST_MODE_DISCARD,
		.block_ms = r->block_ms,
		.buffers = r->buffers,
		.buffer_size = r->buffer_size,
		.subbuf_size = r->subbuf_size,
		.max_memory = r->max_memory,
		.process_memory = r->process_memory,
		.owner = getuid(),
		.owner_gid = getgid(),
		.umask = st_user_umask(),
		.all_users = true, /* the command's processes, whoever they become */
		.relay = r->streams ? &r->relay : NULL,
		.relay_session = r->relay_session,
	};
	struct st_session *ses;

	if (st_session_create(d, &scfg, &ses, err, errlen) < 0)
		return NULL;
	for (int i = 0; i < r->npatterns; i++) {
		struct st_rule rule = { .enable = true };

		snprintf(rule.pattern, sizeof(rule.pattern), "%s", r->patterns[i]);
		st_session_add_rule(d, ses, &rule);
	}
	for (int i = 0; i < r->ndisables; i++) {
		struct st_rule rule = { .enable = false };

		snprintf(rule.pattern, sizeof(rule.pattern), "%s", r->disables[i]);
		st_session_add_rule(d, ses, &rule);
	}
	return st_session_start(d, ses, err, errlen) < 0 ? NULL : ses;
}

/* Runs the command with the libraries preloaded, and the daemon until it
 * ends: 0, or record's exit status after an error message. */
static int run_command(struct record *r, struct st_daemon *d, const struct st_attach_libs *libs,
		       const char *rundir, const char *probes, const char *agent)
{
	char preload[ST_ATTACH_LIBS_MAX * PATH_MAX];
	char **env;
	int ret;

	preload_of(libs, preload, sizeof(preload));
	env = child_env(preload, rundir, r->stack, r->stack_sample, probes, *agent ? agent : NULL);
	if (!env) {
		st_err(V, "out of memory");
		return 2;
	}
	ret = spawn(r, env);
	free_env(env);
	if (ret < 0) {
		st_err(V, "cannot run %s: %s", r->command, strerror(-ret));
		return ret == -ENOENT ? 127 : 126;
	}
	d->child_pidfd = (int)syscall(SYS_pidfd_open, r->child, 0);
	escalated_pid = r->child;
	d->escalate = say_escalation;
	r->d = d;
	if (d->child_pidfd < 0 ||
	    st_watch_add(&d->loop, &r->child_watch, d->child_pidfd, EPOLLIN, on_child, r, false) < 0) {
		st_err(V, "cannot watch the command: %s", strerror(errno));
		kill(r->child, SIGKILL);
		waitpid(r->child, NULL, 0);
		return 2;
	}
	st_daemon_run(d);
	return 0;
}

int st_cmd_record(const struct st_verb *v, int argc, char **argv)
{
	struct families fam;
	struct record r = {
		.buffer_size = 0, /* chosen with the sub-buffer size (ctl/common/checks.h) */
		.subbuf_size = 0,
		.max_memory = 0, /* chosen (st_memory_bounds) */
		.process_memory = 0,
		.buffers = st_buffers_default(),
		.stack = 4,
	};
	char outdir[PATH_MAX], rundir[PATH_MAX], err[PATH_MAX + 128], relay_session[64], agent[PATH_MAX];
	static struct st_attach_libs libs;
	const char *patterns[argc + MAX_FAMILIES + 2 + ST_PROBES_MAX + ST_CATALOG_NAMES_MAX];
	const char *disables[ST_CATALOG_ON_REQUEST_MAX];
	char defaults[MAX_FAMILIES][80], probe_patterns[ST_PROBES_MAX][80], probes_env[8192];
	const char *env_clock = getenv("SHIMTRACE_CLOCK");
	struct st_daemon_config dcfg = { 0 };
	struct st_daemon d;
	struct st_session *ses = NULL;
	int ret, lockfd;

	r.patterns = patterns;
	if (env_clock && *env_clock && st_parse_clock(env_clock, &r.clock) < 0) {
		st_err(V, "SHIMTRACE_CLOCK: '%s' is neither tsc nor monotonic", env_clock);
		return 2;
	}
	if (parse_args(v, &r, argc, argv) < 0)
		return 2;
	if (r.lock_order && r.npids) {
		st_err(V, "--lock-order goes with a command: a JVM joined while it runs cannot give "
			  "the monitors its threads own (HotSpot grants that only at its start)");
		return 2;
	}
	families_known(&fam);
	if (families_choose(&fam, r.wrap ? r.wrap : ST_DEFAULT_FAMILIES) < 0)
		return 2;
	/* a running process attached to takes an agent's family only by name:
	 * all would refuse every process that is not a JVM */
	if (r.npids && r.wrap && strcmp(r.wrap, "all") == 0)
		for (size_t f = 0; f < fam.n; f++)
			fam.wrapped[f] = fam.wrapped[f] && !fam.agent[f];
	if (r.lock_order && !family_wrapped(&fam, ST_JVM_FAMILY)) {
		st_err(V, "--lock-order adds the lock order of Java monitors: it needs --wrap jvm (the "
			  "other families' lock order comes with their events)");
		return 2;
	}
	/* (no -e: every tracepoint of the families wrapped, but those
	 * recorded only on request, disabled after) */
	r.disables = disables;
	if (r.npatterns == 0)
		for (size_t f = 0; f < fam.n; f++) {
			int k;

			if (!fam.wrapped[f])
				continue;
			snprintf(defaults[f], sizeof(defaults[f]), "%s:*", fam.name[f]);
			r.patterns[r.npatterns++] = defaults[f];
			k = st_catalog_on_request(fam.name[f], disables + r.ndisables,
						  ST_CATALOG_ON_REQUEST_MAX - r.ndisables);
			if (k < 0) {
				st_err(V, "too many tracepoints recorded only on request");
				return 2;
			}
			r.ndisables += r.lock_order ? 0 : k;
		}
	else if (r.lock_order) {
		/* (the order is told before each contended enter, which
		 * must be there: reports apply it to the thread's next lock) */
		r.patterns[r.npatterns++] = ST_CATALOG_LOCK_ORDER;
		r.patterns[r.npatterns++] = ST_CATALOG_LOCK_ORDER_ENTER;
	}
	if (check_patterns(&r, &fam) < 0)
		return 2;
	/* (the names of what the jvm events number) */
	r.npatterns += st_catalog_names(r.patterns, r.npatterns, r.patterns + r.npatterns);
	/* each probe is recorded: it was asked for */
	for (int i = 0; i < r.nprobes; i++) {
		st_probe_opt_pattern(&r.probes[i], probe_patterns[i], sizeof(probe_patterns[i]));
		r.patterns[r.npatterns++] = probe_patterns[i];
	}
	if (!st_probe_opts_env(r.probes, r.nprobes, probes_env, sizeof(probes_env))) {
		st_err(V, "too many --function and --probe options");
		return 2;
	}
	if (r.nprobes && r.npids) {
		st_err(V, "--function and --probe go with a command; a running process gets its probes "
			  "with shimtrace enable --pid");
		return 2;
	}
	ret = r.npids ? 0 : find_command(&r);
	if (ret)
		return ret;
	if (!r.npids && statically_linked(r.command)) {
		st_err(V, "%s is statically linked: no preloaded library can interpose its calls "
			  "(nor can attach), so nothing of it would be recorded",
		       r.command);
		return 2;
	}
	ret = st_relay_opts(V, r.set_url, r.ctrl_url, r.data_url, r.outdir != NULL, &r.relay);
	if (ret < 0)
		return 2;
	r.streams = ret > 0;
	if (!r.outdir) {
		default_outdir(outdir, sizeof(outdir));
		r.outdir = outdir;
	}

	if (libraries_of(&fam, r.nprobes > 0, &libs) < 0 || agent_of(&fam, agent, sizeof(agent)) < 0)
		return 2;
	rundir_sweep();
	lockfd = rundir_make(rundir, sizeof(rundir));
	if (lockfd < 0) {
		st_err(V, "cannot create a private directory in %s: %s", tmp_dir(), strerror(-lockfd));
		return 2;
	}
	if (r.streams) {
		/* (the trace is written where it would be without --set-url,
		 * and removed once the relay has it all; the relay's session
		 * is named by this record, and the relay adds the date) */
		snprintf(relay_session, sizeof(relay_session), "shimtrace-record-%d", (int)getpid());
		r.relay_session = relay_session;
	}
	st_log_setup("shimtrace record", ST_LOG_WARN, false);
	dcfg.rundir = rundir;
	dcfg.clock = r.clock;
	dcfg.private_instance = true;
	dcfg.max_memory = UINT64_MAX; /* its one session's bound is the bound */
	if (st_daemon_init(&d, &dcfg, err, sizeof(err)) < 0) {
		st_err(V, "%s", err);
		rundir_remove(rundir, lockfd);
		return 2;
	}
	ses = session_start(&d, &r, err, sizeof(err));
	if (!ses) {
		st_err(V, "%s", err);
		ret = 2;
		goto out;
	}
	if (r.npids) {
		/* (the call stacks --stack asks for, as a command's environment
		 * would say them) */
		struct st_attach_what what = { libs.p, libs.n, r.stack + 1, r.stack_sample,
					       agent[0] ? agent : NULL, "" };

		if (st_record_attach(&d, rundir, &what, r.pids, (int)r.npids, r.quiet) < 0) {
			/* (said; none stays attached, and no trace is left) */
			st_session_stop(&d, ses);
			remove_trace(r.outdir);
			ret = 1;
			goto out;
		}
	} else {
		ret = run_command(&r, &d, &libs, rundir, probes_env, agent);
		if (ret)
			goto out;
	}
	/* objects and line tables on their way: the call sites need them */
	st_daemon_settle(&d, 3000);
	st_session_stop(&d, ses);
	if (r.streams)
		relay_end(&r, ses);
	unmatched_report(ses);
	if (!r.quiet)
		summary(&d, ses, &r);
	if (!r.quiet && (family_wrapped(&fam, "pthread") || family_wrapped(&fam, "futex") ||
			 family_wrapped(&fam, ST_JVM_FAMILY)))
		locks_top(r.outdir);
	ret = r.status;
	if (r.streams && (r.sent.lost || !r.sent.sessions)) {
		if (r.quiet)
			st_err(V, "%" PRIu64 " packet%s lost sending to the relay daemon (%s): the "
				  "whole trace is kept in %s",
			       r.sent.lost, r.sent.lost == 1 ? "" : "s", r.sent.err, r.outdir);
		ret = ret ? ret : 1;
	} else if (r.streams)
		remove_trace(r.outdir);
out:
	st_daemon_fini(&d);
	rundir_remove(rundir, lockfd);
	return ret;
}
