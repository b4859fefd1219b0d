/*
 * Verbs and options of the shimtrace command: the single source of their
 * --help text and of the generated man page (gen-man).
 */
#include <stddef.h>

#include "ctl/cli.h"

static const struct st_opt record_opts[] = {
	{ "output", 'o', "DIR",
	  "write the trace into DIR (default: ./shimtrace-YYYYMMDD-HHMMSS)",
	  "DIR is created with its parents; an existing DIR must not hold a trace already." },
	{ "event", 'e', "PATTERN",
	  "record tracepoints matching the glob PATTERN over provider:name (repeatable; default: pthread:*)",
	  "A pattern that matches no known tracepoint is an error. `shimtrace view` and "
	  "babeltrace2 show the provider:name of every event." },
	{ "overwrite", 0, NULL,
	  "flight recorder: keep the newest events, overwriting the oldest, and write what the buffers hold at the end",
	  "Without it (discard mode) a full buffer drops new events, and the number dropped "
	  "is recorded in the trace and shown in the summary." },
	{ "buffer-size", 0, "SIZE", "ring buffer per thread (default: 32M)",
	  "SIZE takes a k, M or G suffix. It is a whole number of sub-buffers." },
	{ "subbuf-size", 0, "SIZE", "sub-buffer size, a multiple of 4k (default: 1M)",
	  "The consumer takes whole sub-buffers; a thread whose buffer holds no free sub-buffer "
	  "loses events (discard mode) or overwrites the oldest sub-buffer (--overwrite)." },
	{ "max-memory", 0, "SIZE",
	  "bound on the buffer memory of one process (default: 2G); threads beyond it lose their events (counted)",
	  "Memory is only used as threads write: the bound is what a process may reach, "
	  "not what it takes up front." },
	{ "clock", 0, "tsc|monotonic",
	  "trace clock (default: tsc when constant and non-stop, else monotonic); also SHIMTRACE_CLOCK",
	  NULL },
	{ "quiet", 'q', NULL, "do not print the summary", NULL },
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct st_opt view_opts[] = {
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

const struct st_verb st_verbs[] = {
	{ "record", "[OPTIONS] [--] COMMAND [ARGS...]",
	  "run COMMAND and record a trace of what it does",
	  "Runs COMMAND with the shimtrace libraries preloaded and a private session daemon "
	  "(no system daemon is needed), traces COMMAND and every process it starts (fork, exec), "
	  "and writes a CTF 1.8 trace that babeltrace2 and Trace Compass read. The loaded objects "
	  "of every process are recorded as statedump events, so `babeltrace2 --debug-info DIR` "
	  "shows each event's caller as function and source line. At the end it prints, on "
	  "standard error, the events recorded and lost per process and the trace directory, "
	  "and exits with COMMAND's exit status (128 + the signal number when COMMAND was killed "
	  "by a signal, 127 when COMMAND cannot be run).",
	  record_opts, st_cmd_record },
	{ "view", "[OPTIONS] DIR", "print the events of a trace as text",
	  "Prints every event of the trace in DIR, one per line and in time order: the time "
	  "(wall clock, nanoseconds), the process id and name, the thread id, the event name "
	  "and its fields. A trace it cannot read is an error naming the problem.",
	  view_opts, st_cmd_view },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};
