/*
 * shimtraced's options: the one source of its --help and its man page.
 */
#include <stddef.h>

#include "ctl/common/cli.h"

static const struct st_opt daemon_opts[] = {
	{ "foreground", 'f', NULL, "stay in the foreground and log to standard error",
	  "Without it, shimtraced detaches once it listens (the command returns then, with "
	  "status 0, or 1 and an error if it could not start) and logs to syslog." },
	{ "rundir", 'd', "DIR", "where the sockets and the pid file go",
	  "Default: $SHIMTRACE_RUNDIR if set, else /run/shimtrace for root (the system daemon), "
	  "else $XDG_RUNTIME_DIR/shimtrace." },
	{ "pidfile", 'p', "FILE", "the pid file (default RUNDIR/shimtraced.pid)",
	  "It is locked while the daemon runs: a second daemon for the same file refuses to "
	  "start, before it creates anything (its run directory included)." },
	{ "syslog", 0, NULL, "log to syslog, also in the foreground", NULL },
	{ "log-level", 'l', "LEVEL", "error, warning, info (default) or debug", NULL },
	{ "clock", 0, "tsc|monotonic", "event clock (default: tsc when invariant)", NULL },
	{ "group", 'g', "GROUP", "the group whose members may send commands (default shimtrace)",
	  "For the system daemon (root): members of GROUP (a name, or a number) may send "
	  "commands; the control socket is then 0660 and belongs to GROUP. Without such a "
	  "group, only root may." },
	{ "quota", 'q', "NAME=VALUE", "a per-user limit (repeatable; see QUOTAS)",
	  "NAME is connections, processes, classes, fields, metadata, symbols, sessions, "
	  "descriptors or memory; sizes take K, M and G. See QUOTAS below." },
	{ "max-memory", 0, "SIZE",
	  "bound on the buffer memory of all sessions together (default: half the physical memory)",
	  "Each session has its own bound (shimtrace create --max-memory); this one holds for "
	  "them all: a process is granted thread buffers only while both have room, as "
	  "shimtrace(1) describes under --max-memory. status shows what is committed and "
	  "granted." },
	{ "inspector-memory", 0, "SIZE", "address space of one inspector (default 1G)",
	  "Inspectors read the objects traced processes map (ELF, DWARF); one that needs more "
	  "fails, and that object's call sites stay unrefined." },
	{ "inspector-timeout", 0, "MS", "time for one object's line table (default 10000)",
	  "An inspector that takes longer is killed; that object's call sites stay unrefined." },
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

const struct st_verb st_daemon_verb = {
	"", "[OPTIONS]", "the shimtrace session daemon",
	"Registers the processes that carry the shimtrace preload, holds the sessions the "
	"shimtrace command creates, drains the processes' buffers and writes the traces.",
	daemon_opts, NULL,
};
