/*
 * Verbs and options of the shimtrace command: the single source of their
 * --help text and of the generated man page (gen-man).
 */
#include <stddef.h>
#include <string.h>

#include "ctl/common/checks.h"
#include "ctl/cli/cmd_control.h"
#include "ctl/cli/cmd_events.h"
#include "ctl/cli/cmd_export.h"
#include "ctl/cli/cmd_record.h"
#include "ctl/cli/cmd_report.h"
#include "ctl/cli/cmd_top.h"
#include "ctl/cli/cmd_view.h"
#include "ctl/cli/filteropts.h"
#include "ctl/cli/progressopts.h"
#include "ctl/cli/verbs.h"
#include "ctl/common/cli.h"

/* The buffer geometry of record and create (st_geometry, ctl/common/checks.h). */
#define BUFFER_OPT                                                                          \
	{ "buffer-size", 0, "SIZE", "ring buffer per CPU, or per thread with --buffers per-thread (default: 32M)", \
	  "SIZE takes a k, M or G suffix. Per CPU, without it and --subbuf-size, a buffer is "  \
	  "32M, or the largest power of two (1M at least) for which the buffers of all CPUs "   \
	  "fit --process-memory; buffers that do not fit (even of 1M) are refused. "            \
	  "A buffer is 2 to 1024 whole sub-buffers (8k to "                                     \
	  "64G). Without --subbuf-size, its sub-buffers are 1M, halved while fewer than 4 "   \
	  "would fit and doubled while more than 1024 would (--buffer-size 1M: 4 of 256k); "   \
	  "a size that is not a whole number of them is refused. The geometry chosen is "      \
	  "shown by record's summary, create and status." }
#define SUBBUF_OPT                                                                          \
	{ "subbuf-size", 0, "SIZE", "sub-buffer size, a multiple of 4k from 4k to 64M (default: 1M)", \
	  "The consumer takes whole sub-buffers; a thread whose buffer holds no free "         \
	  "sub-buffer loses events (discard mode) or overwrites the oldest sub-buffer "         \
	  "(--overwrite). Without --buffer-size the buffer stays 32M if that is 2 to 1024 "    \
	  "sub-buffers, else it is 2 (or 1024) of them; with it, the two must agree." }

/* --blocking of record and create (st_blocking_parse, ctl/common/checks.h). */
#define BLOCKING_OPT                                                                        \
	{ "blocking", 0, "[=TIMEOUT]",                                                       \
	  "lose no event: a thread whose buffer is full waits for the consumer (at most TIMEOUT)", \
	  "Discard mode only (not with --overwrite). A thread that finds its buffer full "     \
	  "waits, in the traced call, until the consumer has written a sub-buffer out, so "    \
	  "that a program faster than the consumer is slowed down instead of losing events. "  \
	  "Without TIMEOUT it waits as long as needed and never loses an event; with it, "      \
	  "a wait that lasts TIMEOUT gives up: the event is lost (counted as buffer full), "   \
	  "and so are the thread's next ones, without waiting, until its buffer has room "     \
	  "again. TIMEOUT is a whole number and a unit, ms, s, min or h (100ms, 2s, 1min), "   \
	  "1ms to 24h, and follows an '=' (--blocking=2s). A thread never waits for a daemon " \
	  "that is gone: when the daemon has exited, or has not served the process for 10 "    \
	  "seconds, its events are lost (counted) instead. A signal handler that interrupts "  \
	  "an event being written never waits: its event is lost (nested)." }
/* --buffers of record and create (st_buffers_parse, ctl/common/checks.h). */
#define BUFFERS_OPT                                                                         \
	{ "buffers", 0, "per-process|per-user|per-thread",                                            \
	  "a ring buffer per CPU in each process (default), per CPU for each user, or per "    \
	  "thread that writes",                                                                \
	  "per-process (LTTng's word; the default where glibc registers rseq areas, 2.35 and " \
	  "later, else per-thread): each process has a buffer for every CPU "                 \
	  "of the machine, made by its first event (the daemon then allocates its pages), "    \
	  "and every thread writes into the buffer of the CPU it runs on, in a restartable "   \
	  "sequence (rseq) that the kernel restarts when the thread is preempted, moved or "   \
	  "signalled: no lock and no atomic instruction, and a thread's first event costs "    \
	  "what any other does, whatever the number of threads. A process's share is then "    \
	  "CPUs x --buffer-size, which must fit --process-memory (without --buffer-size and "  \
	  "--subbuf-size, a CPU's buffer is 32 MiB, or the largest power of two that fits, "    \
	  "1 MiB at least). A process whose "                                                   \
	  "glibc registered no rseq area (before 2.35, or GLIBC_TUNABLES=glibc.pthread.rseq=0) " \
	  "writes per-thread buffers of the same geometry instead (as many as CPUs). "         \
	  "per-user (system-wide sessions, LTTng's per-UID buffers): the daemon makes one "    \
	  "buffer per CPU for each user whose processes the session traces, and every traced " \
	  "process of that user writes into it: memory is users x CPUs x --buffer-size, "      \
	  "whatever the number of processes (a process without rseq, or one the daemon found " \
	  "running without a connection, writes buffers of its own instead). "                 \
	  "per-thread: each thread that writes claims a buffer of its own at its first event " \
	  "(made resident then), as many as fit --process-memory. See doc/percpu.md." }
/* What record and create take to make a session's buffers. */
#define SESSION_BUFFER_OPTS                                                                  \
	BLOCKING_OPT, BUFFERS_OPT, BUFFER_OPT, SUBBUF_OPT, MAX_MEMORY_OPT, PROCESS_MEMORY_OPT

/* The memory bounds of record and create (st_memory_bounds, ctl/common/checks.h;
 * ctl/daemon/model/memory.h). */
#define MAX_MEMORY_OPT                                                                     \
	{ "max-memory", 0, "SIZE",                                                          \
	  "bound on the buffer memory of all the session's processes together (default: "    \
	  "half the physical memory)",                                                      \
	  "A process's buffers (one per CPU, each of --buffer-size and a header; with "       \
	  "--buffers per-thread, one per thread that writes, committed at its first event "  \
	  "and kept by its process for its later threads until it ends) are granted by the " \
	  "daemon. The daemon grants each process its share (--process-memory) while the "     \
	  "bound has room for it; after that, what is left and half the buffers no thread "  \
	  "claimed of the process with the most (the process is shrunk; every process keeps " \
	  "the buffers its threads claimed, and at least one); with nothing to take, none "  \
	  "(refused). A process refused, or (per thread) a thread that finds no buffer within " \
	  "its process's grant, loses its events, counted as \"no memory left in the "        \
	  "session\", and its process is granted "                                            \
	  "up to twice as many at the daemon's next tick (a tenth of a second), from memory " \
	  "ended processes gave back or others did not claim. record's summary and status "  \
	  "show the memory committed and granted, and how many processes were shrunk or "    \
	  "refused. The daemon's own bound (shimtraced --max-memory) applies as well; see "   \
	  "MEMORY below for what N processes of T threads take." }
#define PROCESS_MEMORY_OPT                                                                 \
	{ "process-memory", 0, "SIZE",                                                      \
	  "bound on the buffer memory of one process (default: 2G, or --max-memory if "      \
	  "smaller)",                                                                       \
	  "Per CPU (the default), the buffers of all CPUs must fit in it: without "          \
	  "--buffer-size and --subbuf-size, the buffers are made smaller (down to 1M) until " \
	  "they do; buffers that still do not fit are refused. With --buffers per-thread "    \
	  "it holds SIZE / "                                                                \
	  "(--buffer-size + 4k) buffers, one per thread that writes at once; a thread that "  \
	  "finds none free loses its events, counted as \"no thread buffer\". Memory is "     \
	  "committed as it is used: the share is what a process may reach, not what it "     \
	  "takes up front. It may not be above --max-memory." }

/* What -o DIR may be, for record and create (ctl/daemon/out/tracedir.c). */
#define OUTPUT_RULES                                                                       \
	"DIR and its missing parents are made with your rights, so only where you could "  \
	"make them yourself, with the modes your umask gives (directories 0777 & ~umask, "   \
	"files 0666 & ~umask). An existing DIR must be an empty directory of yours that no " \
	"one else may write (group-writable only if its group is your own gid). A symbolic " \
	"link on the way, DIR itself included, is followed only if it is yours or root's. "  \
	"Every file is created new in the directory, never through a link or over a file "  \
	"that is there."

/* What --set-url does, for record and create. */
#define RELAY_RULES                                                                          \
	"Each packet goes to the relay, with its index, about a second after its events were "    \
	"written, so that `babeltrace2 -i lttng-live net://HOST/host/HOSTNAME/SESSION` and "       \
	"Trace Compass follow the session while it runs; the relay writes it under its output "    \
	"directory as HOSTNAME/SESSION-YYYYMMDD-HHMMSS/trace. Nothing on the program's path waits "  \
	"for the network: a slow relay only falls behind. A relay that goes away is tried again "  \
	"every second and, once back, gets a new session of the same name that starts where the "  \
	"old one was cut; what no relay has said written when the session ends is counted as "    \
	"packets lost sending to the relay daemon (status and record's summary say so). The "     \
	"streamed trace's clock is the one calibrated when it began (its metadata can only "      \
	"grow); the local copy's is refined to the end."
#define RELAY_URL_OPTS                                                                        \
	{ "ctrl-url", 0, "URL",                                                                   \
	  "with --data-url, instead of --set-url: the relay's control connection, tcp://HOST:PORT", \
	  NULL },                                                                                 \
	{ "data-url", 0, "URL", "with --ctrl-url: the relay's data connection, tcp://HOST:PORT",  \
	  NULL }

/* --function and --probe of record and enable (ctl/cli/probeopts.c). */
#define SPEC_RULES                                                                           \
	"SPEC is ADDR, SYM or SYM+OFF, each optionally after LIB: (the object whose file "      \
	"name is LIB or starts with LIB then '.' or '-': libc:malloc); ADDR and OFF are octal " \
	"(0NNN), decimal or hexadecimal (0xNNN). A SYM is looked up in the executable's "       \
	"symbol table first, then its libraries' in load order; LIB:ADDR is an address of "    \
	"LIB's file, as objdump shows it. The probe replaces the instructions at its "         \
	"address with a jump to a trampoline that records the event and runs them, relocated " \
	"(capstone); an address that does not start an instruction of its function, a "       \
	"function too short for the 5-byte jump, a branch landing inside the bytes it "        \
	"replaces or an instruction that cannot be relocated is refused, with the reason, "    \
	"and nothing is written. NAME= names the tracepoint (probe:NAME); by default a "       \
	"probe is named after SYM (probe:SYM, probe:SYM_0xOFF)."
#define PROBE_OPTS                                                                           \
	{ "function", 0, "SPEC|NAME=SPEC",                                                      \
	  "plant a function-entry probe: probe:NAME records arg0..arg5 and the caller (repeatable)", \
	  "Each call of the function records probe:NAME with the first six integer "          \
	  "arguments (rdi, rsi, rdx, rcx, r8, r9) as fields arg0 to arg5 and the caller's "    \
	  "address as the event's call site. A function starting with endbr64 keeps it: the "  \
	  "jump goes after it. " SPEC_RULES },                                                 \
	{ "probe", 0, "SPEC|NAME=SPEC",                                                         \
	  "plant a bare probe: probe:NAME records the instruction's address (repeatable)",       \
	  "A bare probe may be anywhere in a function: the registers, the flags and the red "  \
	  "zone of the code around it are kept. " SPEC_RULES }

static const struct st_opt record_opts[] = {
	{ "output", 'o', "DIR",
	  "write the trace into DIR (default: ./shimtrace-YYYYMMDD-HHMMSS)",
	  OUTPUT_RULES },
	{ "set-url", 0, "URL",
	  "stream the trace live to an lttng-relayd at URL (net://HOST[:CTRL_PORT[:DATA_PORT]], ports 5342 and 5343 by default) instead of a directory (a local copy is removed once the relay has it all)",
	  "The relay daemon is asked before the command runs: one that does not answer is an "
	  "error then. " RELAY_RULES " The relay's session is named shimtrace-record-PID. The "
	  "trace is written to ./shimtrace-YYYYMMDD-HHMMSS as well while the command runs, and "
	  "removed once the relay has said every packet written; when some could not be sent, "
	  "it is kept, record says where and how many packets were lost, and exits 1 (or "
	  "COMMAND's status, when it was not 0). "
	  "Excludes -o." },
	RELAY_URL_OPTS,
	{ "pid", 'p', "PID[,PID...]",
	  "attach to these running processes, started without shimtrace, instead of running a COMMAND",
	  "record loads the tracer and the families of --wrap into each process (as a debugger "
	  "calls a function in its inferior: ptrace, at a point where no thread of the process "
	  "holds a lock the loader needs) and redirects the calls it has bound already: the "
	  "entries of its global offset tables that name the wrapped functions, in every "
	  "object it has loaded (pages the loader made read-only, RELRO, are made writable for "
	  "the change and read-only again); objects it loads later are redirected as they are "
	  "loaded. A call under way as it attaches is not recorded. The recording ends when "
	  "every process has exited, or when record is interrupted (Ctrl-C, SIGINT, SIGTERM): "
	  "record then detaches from those still running, puts back every entry it changed "
	  "(a call under way finishes as it began; the tracer stays loaded, unused) and writes "
	  "the trace; the processes run on, untraced. It is done as the process's owner: "
	  "a process another user owns (unless record runs as root), one running a setuid or "
	  "setgid program, one that is not dumpable (PR_SET_DUMPABLE 0), one a debugger "
	  "traces or Yama's ptrace_scope protects, and a statically linked one are refused, "
	  "with a line saying why, and record exits 1; when one of several cannot be "
	  "attached, none is. Each process attached and detached is said on standard error. "
	  "Needs glibc 2.34 or later in the process. Up to 64 processes; -p as perf spells it. "
	  "--stack and --stack-sample apply to the processes as to a command's. With --wrap "
	  "jvm, each process must be a HotSpot JVM (one that maps libjvm.so): once the tracer "
	  "is attached, the JVM agent libshimtrace-jvm.so is loaded through the JVM's attach "
	  "mechanism, as jcmd loads one (its attach listener, when it does not run yet, started "
	  "by a file .attach_pidPID and one SIGQUIT, as that user), and its Agent_OnAttach "
	  "starts recording the JVM's monitors. Refused in one line, before anything is loaded "
	  "or sent: a process that is not a HotSpot JVM, a JVM started with "
	  "-XX:+DisableAttachMechanism, one that does not catch SIGQUIT and whose listener "
	  "does not run (-Xrs); after, an agent whose Agent_OnAttach fails (its code is said, "
	  "and the attach undone), a listener that does not start within 10 s or an agent "
	  "that does not answer within 15 s. A JVMTI agent cannot be unloaded: after the "
	  "detach the agent stays, its events off, and a later attach finds it and does not "
	  "load it again. JDK 21 and later print a warning on the JVM's standard error when "
	  "an agent is loaded so, unless it runs with -XX:+EnableDynamicAgentLoading. A JVM "
	  "joined so gets no jvm:monitor_held (HotSpot grants the owned-monitor capability "
	  "only at start)." },
	{ "wrap", 'w', "FAMILIES",
	  "interpose these wrapper families, a comma-separated list or all (default: pthread)",
	  "Each family is a preload library, libshimtrace-FAMILY.so, whose wrappers write the "
	  "tracepoints of provider FAMILY (EVENTS lists them). Only the families chosen are "
	  "preloaded: a program calls the others' functions untouched. jvm is the JVMTI agent "
	  "libshimtrace-jvm.so (built when configure finds a JDK): record preloads the core and "
	  "appends -agentpath:PATH to the command's JAVA_TOOL_OPTIONS (the user's kept first), so "
	  "every JVM the command starts records its monitors and threads (the jvm provider, "
	  "shimtrace-events(7)); the JVM then prints \"Picked up JAVA_TOOL_OPTIONS: ...\" on "
	  "standard error, which is the JVM's doing and cannot be turned off. --wrap jvm,pthread "
	  "records a JVM's monitors and its native locks in one trace; all takes jvm only when it "
	  "was built (but not with --pid: there it is chosen by name only, as a process that is not a JVM is refused); a build without it says so in one line. With --pid the agent is loaded through the JVM's attach mechanism." },
	{ "event", 'e', "PATTERN",
	  "record tracepoints matching the glob PATTERN over provider:name (repeatable; default: every tracepoint of the families wrapped but jvm:monitor_held, see --lock-order; a jvm:... PATTERN that selects monitor events brings jvm:class, jvm:method and jvm:method_line, their names)",
	  "A pattern that matches tracepoints of families not wrapped, and none of those "
	  "wrapped, is an error saying which --wrap it needs; one that names a family's "
	  "provider exactly but none of its tracepoints (pthread:mutex_lockk) is an error "
	  "naming the nearest, before the program runs. One that matches no family's "
	  "tracepoint may name the program's own (a provider it or a library it loads "
	  "declares, see shimtrace-events(7)): it is accepted, and if no recorded process had "
	  "a tracepoint it matches, record says so after the run. `shimtrace list-events` "
	  "lists the families' tracepoints; `shimtrace view` and babeltrace2 show the "
	  "provider:name of every event." },
	{ "lock-order", 0, NULL,
	  "with --wrap jvm: record the lock order of Java monitors too (jvm:monitor_held), for report deadlocks; added to the default events, or to those of -e with jvm:monitor_contended_enter, which it precedes",
	  "Each Java thread that blocks on a monitor then writes, before its contended enter, "
	  "one jvm:monitor_held per monitor it owns, so that report deadlocks can find cycles "
	  "through monitors (and, with --wrap jvm,pthread, through monitors and native locks "
	  "taken with JNI). Without it, a trace with monitors has no such cycle, and the "
	  "reports say so. It costs: the agent reads the blocked thread's whole stack at each "
	  "contended enter, to prove it owns nothing else (HotSpot 17's JVMTI takes 300 to 400 "
	  "cycles a frame), where it reads only the top frame without; under heavy contention "
	  "in deep stacks that costs more than JDK Flight Recorder's monitor events "
	  "(bench/run-jvm.sh). The other families' lock order comes with their events. "
	  "-e 'jvm:*' selects it as well. Refused with --pid: a JVM joined while it runs gets "
	  "none, as HotSpot grants the capability only at start." },
	PROBE_OPTS,
	{ "overwrite", 0, NULL,
	  "flight recorder: keep the newest events, overwriting the oldest, and write what the buffers hold at the end",
	  "Without it (discard mode) a full buffer drops new events, and the number dropped "
	  "is recorded in the trace and shown in the summary (or waits: --blocking)." },
	SESSION_BUFFER_OPTS,
	{ "clock", 0, "tsc|monotonic",
	  "trace clock (default: tsc when constant and non-stop, else monotonic); also SHIMTRACE_CLOCK",
	  NULL },
	{ "quiet", 'q', NULL, "do not print the summary", NULL },
	{ "no-demangle", 0, NULL,
	  "show C++ function names as the linker has them (_Z...), not demangled", NULL },
	{ "stack", 0, "N",
	  "record up to N frames of call stack at each wait (default 4; 0: none; at most 32)",
	  "A lock's wait event (the lock was found busy: pthread:*_wait) and a futex wait "
	  "(futex:wait_begin) carry the return addresses of the callers above the call "
	  "site, found with the C runtime's unwinder from the .eh_frame tables (programs "
	  "without frame pointers included). The uncontended path never unwinds. The "
	  "command's environment carries the depth (SHIMTRACE_STACK_DEPTH). `report locks "
	  "--stack` groups the waits by stack; a sample of the allocations (--wrap malloc) "
	  "carries one too (--stack-sample)." },
	{ "stack-sample", 0, "SIZE",
	  "with --wrap malloc: a call stack for one allocation each time a thread has allocated SIZE bytes more (default 512K; 1: every allocation)",
	  "Big blocks always take one, small ones in proportion to their bytes, as heap "
	  "profilers sample; `report malloc --stack` shows them under the leaks' call sites. "
	  "Every allocation taking one costs an unwind each (about 1 us at 4 frames): "
	  "bench/run-stack.sh." },

	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

/* --attach of create and start (ctl/daemon/cmd/sessattach.c). */
#define ATTACH_OPT                                                                         \
	{ "attach", 0, NULL,                                                                 \
	  "attach the processes the session's --pid rules name that were started without shimtrace", \
	  "The daemon then loads the tracer and the families (enable --wrap, or those of the " \
	  "rules' patterns) into each process a rule's --pid names that is not registered "    \
	  "with it, and redirects the calls it has bound already, as record --pid does (see "  \
	  "record): when the rule is made (enable), and, for start --attach, at once for the " \
	  "rules made before. Each process attached is said on standard output, each one that " \
	  "cannot be (another user's, a setuid program, one that is not dumpable, a static "    \
	  "one) on standard error, and the exit status is then 1. A process is detached when "  \
	  "the last session that attached it stops or is destroyed, and when the daemon ends: " \
	  "its calls go back where they went and it runs on untraced. With the jvm family "    \
	  "(--wrap jvm, or a pattern jvm:...), the JVM agent is loaded into each JVM after the " \
	  "tracer, and what is refused is refused, as for record --pid --wrap jvm (see "       \
	  "record); the agent stays after the detach, its events off." }
#define SESSION_OPT                                                                        \
	{ "session", 's', "NAME", "the session (default: your latest)",                     \
	  "Without it, the verb acts on the latest session you created that still exists, never on " \
	  "another user's. Session names are each user's own: root names another user's session " \
	  "NAME@UID." }
#define HELP_OPT { "help", 'h', NULL, "show this help", NULL }
#define END_OPT { NULL, 0, NULL, NULL, NULL }

static const struct st_opt create_opts[] = {
	{ "output", 'o', "DIR",
	  "write the trace into DIR (default: $HOME/shimtrace-traces/NAME-YYYYMMDD-HHMMSS)",
	  "Without HOME the default is $XDG_STATE_HOME/shimtrace/traces/NAME-YYYYMMDD-HHMMSS; "
	  "with neither set, create refuses and asks for -o (a trace never goes to a name "
	  "anyone could guess in a directory everyone may write, such as /tmp). The daemon "
	  "creates the trace as you: " OUTPUT_RULES },
	{ "set-url", 0, "URL",
	  "stream the trace live to an lttng-relayd at URL (net://HOST[:CTRL_PORT[:DATA_PORT]], ports 5342 and 5343 by default)",
	  "The relay daemon is asked first: one that does not answer is an error. Then the "
	  "session daemon connects to it from where it runs, within 4 seconds, or create "
	  "fails with the daemon's reason and the session is destroyed (the system daemon's "
	  "unit gives it no network: see README.md). " RELAY_RULES
	  " The relay's session has the session's name. The daemon writes the trace to the "
	  "default directory as well (the local copy: -o is excluded, as with lttng), and the "
	  "relay session ends when the session is destroyed." },
	RELAY_URL_OPTS,
	{ "overwrite", 0, NULL, "flight recorder: keep the newest events (see snapshot)", NULL },
	SESSION_BUFFER_OPTS,
	ATTACH_OPT,
	HELP_OPT,
	END_OPT,
};

static const struct st_opt destroy_opts[] = {
	SESSION_OPT,
	{ "all", 'a', NULL, "destroy all your sessions", NULL },
	HELP_OPT,
	END_OPT,
};

static const struct st_opt session_opts[] = { SESSION_OPT, HELP_OPT, END_OPT };

static const struct st_opt status_opts[] = {
	SESSION_OPT,
	{ "json", 0, NULL, "print JSON", NULL },
	HELP_OPT,
	END_OPT,
};

static const struct st_opt rule_opts[] = {
	SESSION_OPT,
	{ "pid", 'p', "PID,...", "only in these processes (at most 64, comma-separated)",
	  "Each PID is a number from 1 to 4194304; an empty element is an error. A PID that "
	  "names no process registered with the daemon is kept in the rule (it selects a "
	  "process that registers with that pid later) with a warning on standard error "
	  "naming it: no such process, or one that is not registered (started without the "
	  "preload, or another user's)." },
	{ "procname", 0, "NAME", "only in processes of this name (the comm, or the executable's name)",
	  "NAME has 1 to 16 bytes and no control character (refused with one line: no process "
	  "is selected by one). It is compared with the bytes a process says its comm and its "
	  "executable are, not with the escaped text `list` shows." },
	{ "uid", 'u', "UID", "only in processes of this user", NULL },
	HELP_OPT,
	END_OPT,
};

static const struct st_opt start_opts[] = {
	SESSION_OPT,
	ATTACH_OPT,
	{ "wrap", 'w', "FAMILIES",
	  "with --attach: the families to load (default: those the session's patterns match)",
	  NULL },
	HELP_OPT,
	END_OPT,
};

/* enable: the rule options, and a dynamic probe to plant. */
static const struct st_opt enable_opts[] = {
	SESSION_OPT,
	{ "pid", 'p', "PID,...", "only in these processes (at most 64, comma-separated)",
	  "As for disable; in a session that attaches (create or start --attach), a process "
	  "started without the preload is attached instead. With --function or --probe: the one "
	  "process to plant the probe in." },
	{ "procname", 0, "NAME", "only in processes of this name (the comm, or the executable's name)",
	  NULL },
	{ "uid", 'u', "UID", "only in processes of this user", NULL },
	{ "wrap", 'w', "FAMILIES",
	  "in a session that attaches (--attach): the families to load into the processes of --pid (default: those the PATTERNs match)",
	  "A comma-separated list of families, or all (the wrapper families). jvm loads the "
	  "JVM agent into a running JVM (see --attach); without --wrap, a PATTERN naming the "
	  "jvm provider (jvm:...) does, never one such as '*'." },
	PROBE_OPTS,
	HELP_OPT,
	END_OPT,
};

static const struct st_opt list_opts[] = {
	{ "pid", 'p', "PID", "only this process (an error if it is not registered)", NULL },
	{ "json", 0, NULL, "print JSON", NULL },
	HELP_OPT,
	END_OPT,
};

static const struct st_opt probe_opts[] = {
	{ "pid", 'p', "PID", "the process to load LIBRARY into (required)", NULL },
	HELP_OPT,
	END_OPT,
};

static const struct st_opt events_opts[] = {
	{ "json", 0, NULL, "print JSON: name, family, library and fields of each", NULL },
	{ "pid", 'p', "PID", "the tracepoints of running process PID instead (as list --pid), dynamic probes with how they were planted",
	  "Asks the session daemon, as `shimtrace list --pid PID` does: the process's providers, "
	  "those of libraries it loaded and its dynamic probes (enable --function/--probe), each "
	  "probe followed by how it was planted." },
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct st_opt report_opts[] = {
	{ "sort", 0, "FIELD",
	  "rank locks by wait (total wait, the default), contended, acquired, hold or max; "
	  "malloc's call sites by bytes (the default) or count; io's files by time (the default) "
	  "or bytes",
	  NULL },
	{ "top", 'n', "N", "show the first N locks, threads and conditions (default 10; 0: all)", NULL },
	{ "pid", 'p', "PID", "only this process's events", NULL },
	ST_FILTER_OPTS
	{ "stack", 0, NULL,
	  "locks: tell the call sites that waited apart by their call stacks, and show them; malloc: show the sampled stacks of the leaks; io: the stacks of the slowest calls",
	  "The stacks the wait events carry (record --stack, on by default: 4 frames): each "
	  "call site is split by the stacks it waited under, each with its callers as `<- "
	  "function (file:line)` lines (JSON: stack, an array of sites). Frames in "
	  "shimtrace's own libraries are left out." },
	{ "json", 0, NULL, "print JSON (its schema is in the man page)", NULL },
	{ "no-demangle", 0, NULL,
	  "show C++ function names as the linker has them (_Z...), not demangled", NULL },
	ST_PROGRESS_OPTS
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct st_opt export_opts[] = {
	{ "format", 'f', "FORMAT",
	  "the format (required): chrome (JSON, small traces) or perfetto (protobuf)", NULL },
	{ "output", 'o', "FILE", "write to FILE (default: the standard output)", NULL },
	{ "pid", 'p', "PID", "only this process's events", NULL },
	{ "time-range", 't', "FROM,TO",
	  "only the events from FROM to TO seconds after the trace's first (TO may be empty)",
	  NULL },
	ST_PROGRESS_OPTS
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct st_opt top_opts[] = {
	{ "delay", 'd', "SECONDS", "refresh every SECONDS (default 1; 0.1 to 3600)",
	  "Each refresh reads what was written to the trace since the last one. On a terminal "
	  "a refresh reads for at most 0.8 of the delay: what it could not read yet is counted "
	  "as behind, and read by the next ones." },
	{ "batch", 'b', "N",
	  "print N refreshes as text on standard output, for scripts and tests (no terminal needed)",
	  "Refreshes are separated by an empty line; each has a title line (what is followed, the "
	  "interval's times, the locks contended, the ranking), the notes (below), the column "
	  "heads and a line per lock. top stops after the refresh that reads the end of a trace "
	  "that is complete (a directory record finished, a session stopped), so that one "
	  "refresh reads all of a complete trace." },
	{ "json", 0, NULL, "with --batch: each refresh as one line of JSON (its schema: man shimtrace, top)",
	  NULL },
	{ "cumulative", 0, NULL,
	  "show the whole run (every event read so far) instead of the last interval; the t key switches",
	  "Over a whole trace, its figures are those of `shimtrace report locks` on the same "
	  "trace: the same locks, contended acquisitions and total waits (the same code counts "
	  "them)." },
	{ "sort", 0, "FIELD",
	  "rank locks by wait (total wait, the default), contended, acquired or hold (total hold time); keys w, c, a, h",
	  NULL },
	{ "top", 'n', "N", "show the first N locks (default: all with --batch; on a terminal, as many as fit)",
	  NULL },
	{ "filter", 'f', "TEXT", "only the locks whose line holds TEXT (a name, a process, a call site); key /",
	  NULL },
	{ "pid", 'p', "PID", "only this process (with -e: the session records only it)", NULL },
	{ "event", 'e', "PATTERN",
	  "start a session of top's own recording the tracepoints PATTERN matches (repeatable: pthread:*), follow it, and destroy it at the end",
	  "The session is created in the session daemon (started if none runs, as create does), "
	  "named top_PID, enabled for PATTERN in every process the daemon traces (processes "
	  "started with the shimtrace preload, or all of them through /etc/ld.so.preload), or "
	  "only in --pid or --uid's, and started; at the end (q, a signal, the last --batch "
	  "refresh) it is stopped and destroyed, and its trace removed unless -o kept it." },
	{ "uid", 'u', "UID", "with -e: only this user's processes", NULL },
	{ "output", 'o', "DIR", "with -e: keep the session's trace in DIR (default: a temporary directory, removed at the end)",
	  NULL },
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

static const struct st_opt view_opts[] = {
	{ "pid", 'p', "PID", "only this process's events", NULL },
	ST_FILTER_OPTS
	{ "help", 'h', NULL, "show this help", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

const struct st_verb st_verbs[] = {
	{ "record", "[OPTIONS] [--] COMMAND [ARGS...] | [OPTIONS] --pid PID[,PID...]",
	  "run COMMAND (or attach to running processes) and record a trace of what it does",
	  "Runs COMMAND with the shimtrace libraries preloaded and a private session daemon "
	  "(no system daemon is needed), traces COMMAND and every process it starts (fork, exec), "
	  "and writes a CTF 1.8 trace that babeltrace2 and Trace Compass read. The loaded objects "
	  "of every process are recorded as statedump events, so `babeltrace2 --debug-info DIR` "
	  "shows each event's caller as function and source line. At the end it prints, on "
	  "standard error, the events recorded and lost per process (an image a process exec'd "
	  "listed under it; past the first 10 processes the rest on one line, but for any that "
	  "lost events), the events lost writing the trace and why (a full disk), the "
	  "trace directory and, when the pthread, futex or jvm family was wrapped, the top of "
	  "`report locks`: "
	  "the locks threads waited for longest, the threads still waiting for one when the "
	  "trace ends, any lock-order cycle, and each process that ended without exiting "
	  "(killed or crashed: `shimtrace report` says how its numbers may be incomplete); "
	  "and exits with COMMAND's exit status (128 + the signal number when COMMAND was killed "
	  "by a signal, 127 when COMMAND is not found, 126 when it cannot be executed).\n"
	  "record and COMMAND are one job: a signal sent to record is passed on to COMMAND, and "
	  "if record is killed with SIGKILL (which it cannot pass on), the kernel kills COMMAND "
	  "with SIGKILL too, so that it never runs on untraced (a setuid COMMAND loses this at "
	  "exec; processes COMMAND started are its own to end). A COMMAND that ignores SIGINT (a "
	  "server) still ends: the second interrupt (Ctrl-C, or SIGINT sent to record) sends it "
	  "SIGTERM and the third SIGKILL, each said on standard error first; the trace is "
	  "written either way. record's private directory, "
	  "$TMPDIR/shimtrace-record-XXXXXX (/tmp without TMPDIR), holds the session's socket and "
	  "a lock record holds while it runs; it is removed when record ends, and the directory "
	  "of a record killed with SIGKILL by the next record: only your own directories whose "
	  "lock nobody holds, and only the files a record makes there.",
	  record_opts, st_cmd_record },
	{ "create", "[OPTIONS] [NAME]", "create a tracing session in the session daemon",
	  "Creates a session named NAME (" ST_SESSION_NAME_RULE "; default auto_DATE_TIME) in the "
	  "session daemon, starting your daemon if none runs (in $SHIMTRACE_RUNDIR when that is "
	  "set). A session has its own rules, "
	  "buffers, mode and trace directory; up to 32 exist at once. It records nothing until "
	  "`start`. A session created by a user other than root traces only that user's "
	  "processes.",
	  create_opts, st_cmd_control },
	{ "destroy", "[OPTIONS] [SESSION]", "stop and forget a session (its trace stays)",
	  "Stops the session if it is started, then forgets it. The trace directory is left as "
	  "it is, but for a session never started: the directory create made for it is removed "
	  "if it is still empty (one that existed before, or that holds anything, stays).",
	  destroy_opts, st_cmd_control },
	{ "start", "[OPTIONS] [SESSION]", "start recording",
	  "Switches on, in every registered process and in processes that start later, the "
	  "tracepoints the session's rules enable. Nothing runs in the processes: the daemon "
	  "writes their shared status pages. A stopped session can be started again: its trace "
	  "grows with new stream files (named with the run's number) and a new statedump, and "
	  "stop and status count each event and each loss once over all its runs.",
	  start_opts, st_cmd_control },
	{ "stop", "[OPTIONS] [SESSION]", "stop recording and complete the trace",
	  "Switches the session's tracepoints off, drains every buffer and completes the trace "
	  "on disk; prints what was recorded and lost. In overwrite mode, writes what the "
	  "buffers hold. Objects and line tables still on their way for its processes are "
	  "waited for (five seconds at most), so that the trace symbolises their callers.",
	  session_opts, st_cmd_control },
	{ "status", "[OPTIONS] [SESSION]", "show the daemon and its sessions",
	  "Shows the daemon (pid, run directory, registered processes), what your processes use "
	  "of the daemon's per-user quotas and what they were refused (root: every user; see "
	  "shimtraced(8)), and each of your sessions: state, mode, buffers, trace directory, "
	  "events recorded and lost, rules.",
	  status_opts, st_cmd_control },
	{ "enable", "[OPTIONS] PATTERN...", "record the tracepoints matching PATTERN",
	  "Adds a rule enabling the tracepoints whose provider:name the glob PATTERN matches, in "
	  "the processes the filters select: with no filter, every process, also those started "
	  "later. Rules are applied in order and the last one that applies to a tracepoint in a "
	  "process decides. Takes effect at once in running processes, even if they are blocked "
	  "or never call a traced function.\n"
	  "PATTERN is a glob (*, ?, [...]) over provider:name, whose parts hold letters, digits "
	  "and _: an empty pattern, a '[' without its ']', a trailing backslash, a second ':' or "
	  "any other character outside brackets is an error, and so is one that names a "
	  "wrapper family's provider exactly but none of its tracepoints (a typo: the error "
	  "names the nearest). A pattern that matches no tracepoint known yet is accepted (a "
	  "library loaded later may declare it) and said so. A jvm:... pattern that selects "
	  "monitor events brings jvm:class, jvm:method and jvm:method_line (their names).\n"
	  "With --function SPEC or --probe SPEC and one --pid PID, PATTERN is a NAME (or "
	  "probe:NAME): the daemon plants a dynamic probe in the running process PID -- a "
	  "process started with the shimtrace preload (record, or /etc/ld.so.preload) -- and "
	  "enables probe:NAME there. A probe inspector of the process's owner loads "
	  "libshimtrace-dynprobe.so into it if needed (as load-probe), has it plan the probe at "
	  "a safe point (other threads run on), then stops every thread and writes the jump "
	  "once none is inside the bytes it replaces (waiting up to three seconds). The "
	  "answer says how the probe was planted (the instructions moved, how many were "
	  "RIP-relative) or why it was refused; `list --pid PID` and `status` say it too. "
	  "`disable probe:NAME --pid PID` removes it: the original bytes are written back the "
	  "same way.",
	  enable_opts, st_cmd_control },
	{ "disable", "[OPTIONS] PATTERN...", "stop recording the tracepoints matching PATTERN",
	  "Adds a rule disabling the tracepoints PATTERN matches, in the processes the filters "
	  "select. Other sessions are not affected. A PATTERN probe:NAME with one --pid PID "
	  "whose process has the dynamic probe NAME planted (enable --function/--probe) "
	  "removes the probe too: its original bytes are written back, with every thread of "
	  "the process stopped outside them.",
	  rule_opts, st_cmd_control },
	{ "list", "[OPTIONS]", "show registered processes and their tracepoints",
	  "Shows every process registered with the daemon (yours, or all for root): pid, user, "
	  "parent, name, executable, and each of its tracepoints with the sessions recording it. "
	  "The name and the executable are what the process says of itself: shown escaped "
	  "(TEXT FROM OTHERS in shimtrace(1)), in JSON as JSON escapes.",
	  list_opts, st_cmd_control },
	{ "snapshot", "[OPTIONS] [SESSION]", "write what an overwrite-mode session's buffers hold now",
	  "Writes, as a trace of its own beside the session's (DIR-snapshot-N), what the "
	  "buffers of an overwrite-mode session hold now, while recording goes on. Each "
	  "snapshot directory is made new, in the directory that held DIR when the session "
	  "was created, with the session's modes; a name already taken (by anything) is "
	  "passed by for the next number.",
	  session_opts, st_cmd_control },
	{ "load-probe", "--pid PID LIBRARY.so", "load a probe library into a running process",
	  "Makes process PID load LIBRARY.so with dlopen; the tracepoints it declares then show "
	  "in `list` and can be enabled. The process runs the dlopen on one of its own threads at "
	  "a safe point (see shimtraced(8)); no thread is created. It is done with the "
	  "credentials of the process's owner, so only what its owner could do: a process that "
	  "is not dumpable, or that ran a setuid program since it registered, is refused.",
	  probe_opts, st_cmd_control },
	{ "list-events", "[OPTIONS] [PATTERN...]",
	  "show the wrapper families' tracepoints and their fields",
	  "Lists every tracepoint of the wrapper families (or those the glob PATTERNs match), "
	  "one a line: provider:name, then its fields as TYPE name (shimtrace-events(7) says "
	  "what each means). The provider is the family, whose library record --wrap preloads. "
	  "No daemon is needed. A PATTERN that matches none of them is an error; an "
	  "application's own tracepoints, which these cannot know, are shown by `list` in "
	  "the processes that declare them.",
	  events_opts, st_cmd_list_events },
	{ "report", "KIND [OPTIONS] [DIR]", "answer questions from a trace: locks, deadlocks, malloc, io",
	  "Reads the trace in DIR (default: the newest shimtrace-* directory in the working "
	  "directory) and prints a report, each call site as function (file:line) from the "
	  "objects' symbols and DWARF line tables (a separate debug file found by build-id is "
	  "used; an address that cannot be resolved shows as object+0xoffset).\n"
	  "`report locks`: each lock (mutex, spinlock, each side of a rwlock) with where it was "
	  "initialised or first used, acquisitions, contended ones (after a wait) and their "
	  "share, the wait's total, mean, p50, p99 and max, the hold time's total, mean and "
	  "max, the threads that took it, and the call sites that waited longest; then the "
	  "condition variables' waits, the threads by time waiting for locks, the threads still "
	  "waiting when the trace ends (a deadlock, or a process killed), and the number of "
	  "lock-order cycles.\n"
	  "`report deadlocks`: every cycle of the lock-order graph (a lock taken while another "
	  "was held), with, for each edge, the thread and the two call sites: locks taken in "
	  "orders that can deadlock, whether or not this run did. Try-locks, a recursive lock "
	  "taken again and cycles of rwlock read sides only give none.\n"
	  "`report malloc` (a trace of --wrap malloc): blocks never freed, grouped by the call "
	  "site that allocated them (blocks, bytes); each process's peak heap and when; "
	  "allocations by call site (bytes or, --sort count, calls); a size histogram; and "
	  "invalid frees: of a pointer the trace saw freed already (double) or never saw "
	  "allocated.\n"
	  "`report io` (a trace of --wrap io): each file, socket and pipe of each process (by "
	  "the path it was opened with; a descriptor's name follows dup and ends at close): "
	  "calls, reads and bytes read, writes and bytes written, failed calls, and the time in "
	  "the calls (total, p50, p99, max), ranked by time or, --sort bytes, by bytes; then "
	  "the ten slowest calls with their call sites.\n"
	  "A trace with lost events, or cut short, says so first: the numbers may miss that "
	  "much. shimtrace-report(1) has the details and the JSON schema.",
	  report_opts, st_cmd_report },
	{ "export", "--format chrome|perfetto [OPTIONS] DIR", "write a trace as a timeline for Perfetto",
	  "Writes the trace in DIR as a timeline that Perfetto UI (ui.perfetto.dev) opens: "
	  "Chrome trace-event JSON (also for chrome://tracing; times in microseconds from the "
	  "first event written), or Perfetto's own protobuf trace (absolute nanoseconds; "
	  "smaller, for large traces): a track per thread, named after its process; spans for "
	  "lock waits (from the call's start, for its wait_ns), condition waits and every call "
	  "with a duration (I/O, joins), with their call stacks; lock holds (acquisition to "
	  "unlock) on a track for each thread and lock; instants for allocations, frees and "
	  "other events, their fields as arguments; with perfetto, each process's live heap as "
	  "a counter. --pid and --time-range keep a large trace small enough to open.",
	  export_opts, st_cmd_export },
	{ "top", "[OPTIONS] DIR|SESSION | -e PATTERN [--pid PID] [--uid UID]",
	  "a live top of contended locks, refreshed every second",
	  "Follows a trace while it is written, and shows, refreshed every second, the locks "
	  "threads waited for in the last interval: the total wait, the contended acquisitions "
	  "and all acquisitions, the hold time, the thread holding the lock now (HELD BY) and "
	  "the threads waiting for it now, the lock (kind, address, and the variable's name for "
	  "a static or global lock), its process, the thread that waited longest (+ when others "
	  "waited too) and the call site that waited longest, as function (file:line). "
	  "Condition variables are not shown (a thread in a condition wait idles).\n"
	  "What it follows: DIR, a trace directory (one `record` or a session is writing, or a "
	  "complete one); SESSION, a session of the session daemon (its trace directory, as "
	  "`status` shows it; a name without a / is a session's if the daemon has one of that "
	  "name); or, with -e PATTERN, a session of its own that records the whole system's "
	  "processes (or --pid's, or --uid's) until top ends.\n"
	  "The trace's events are read in time order as they are written: the daemon writes every "
	  "buffer once a second, so the interval shown ends 2 seconds behind now, and no earlier "
	  "than the last events of a stream that is still written. What it could not show is "
	  "counted on the notes line, never passed over: the events the tracer lost (its "
	  "buffers were full), the events that came late (after later events were shown, from a "
	  "daemon that fell behind: they count in the interval they came in), the bytes written "
	  "but not read yet (behind), and the parts of the trace skipped as damaged (exit status "
	  "3). For a session, its own count of lost events too.\n"
	  "On a terminal (ncurses): q leaves; t switches between the last interval and the whole "
	  "run; w, c, a and h rank by wait, contended, acquired and hold; / filters (the locks "
	  "whose line holds the text typed; empty: all); space refreshes now. Without a "
	  "terminal, --batch N prints N refreshes, as text or JSON (--json: {trace, view, sort, "
	  "from_ns, to_ns, waiting, finished, events, lost, late, behind_bytes, damaged, "
	  "incomplete, locks: [{pid, process, kind, address, name, holders, holder, waiting, "
	  "contended, wait_ns, acquired, hold_ns, threads, thread: {tid, wait_ns, java_name}, sites, site: "
	  "{wait_ns, at: a call site as report locks --json gives it}}]}). A Java monitor (kind "
	  "monitor, the jvm provider's) is shown as monitor of CLASS (tag T), or monitor of "
	  "class C (tag T) when the trace did not name the class (JSON name: without the tag), "
	  "its contended enters only: "
	  "its acquired and hold are unknown (- in text, null in JSON); a Java thread is shown "
	  "with its name (java_name, null for another thread).\n"
	  "A directory, session or option that is not there is a one-line error and exit status "
	  "1 (2 for a bad option).",
	  top_opts, st_cmd_top },
	{ "view", "[OPTIONS] DIR", "print the events of a trace as text",
	  "Prints every event of the trace in DIR, one per line and in time order: the time "
	  "(wall clock, nanoseconds), the process id and name, the thread id, the event name "
	  "and its fields (integers in decimal or 0x hexadecimal, strings between double "
	  "quotes, escaped as TEXT FROM OTHERS in shimtrace(1) says, with \\\" for a quote, "
	  "byte sequences as hexadecimal digits). Lost events are noted on standard error where they happened, with a "
	  "total at the end. A trace that is not whole (events lost writing it to a full disk, "
	  "a recording still under way, or one that did not finish) is shown as far as it goes, "
	  "with a line \"trace incomplete: ...\" saying why on standard error, and exit status 0. A damaged stream "
	  "file (cut short, a bad packet magic, a record that does not decode) does not stop "
	  "it: every whole packet is shown, and each part skipped is said on standard error "
	  "(\"damaged: DIR/FILE: what (at offset N): skipped the rest of the file: M bytes from "
	  "offset P\", or of its packet), with exit status 3. A trace it cannot read at all (no "
	  "metadata) is an error naming the problem, exit status 1.",
	  view_opts, st_cmd_view },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

const struct st_verb *st_verb_find(const char *name)
{
	for (const struct st_verb *v = st_verbs; v->name; v++)
		if (strcmp(v->name, name) == 0)
			return v;
	return NULL;
}
