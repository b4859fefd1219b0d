/*
 * The daemon and its inspectors: why they exist and what they say.
 *
 * Whatever the daemon does to or for a traced process that the kernel
 * would check against a user's rights -- reading /proc/PID/maps and
 * /proc/PID/status, opening the files the process maps, parsing their ELF
 * and DWARF, ptrace for load-probe, taking the status memfd of a process
 * found running -- is done by an inspector: a process the daemon starts
 * from its own executable (argv[1] == ST_INSPECTOR_ARG) that switches, before
 * it reads anything, to the credentials of the traced process's owner (uid,
 * gid, supplementary groups), gives up every capability but those of
 * st_insp_caps_max() (below), sets no-new-privs, and bounds its own
 * memory, CPU time and descriptors. So the kernel's own access checks
 * decide what it can see (a setuid or non-dumpable process refuses it,
 * and so does one of another user namespace unless the owner owns that
 * namespace), a file that defeats libelf or libdw costs that inspector
 * and that file's symbols, and nothing it does can block the daemon: the
 * daemon talks to it without waiting, gives each request a deadline and
 * kills an inspector that misses one.
 *
 * Roles (started on demand, stopped when idle; an objects and lines pair
 * not while it holds files whose tables may still be asked for):
 *
 *   objects  OBJECTS: the objects a process maps, each with its ELF facts
 *            and the identity of its file; DISCOVER: the status memfd of a
 *            process found running (pidfd_getfd)
 *   lines    LINES: the DWARF line table of one object, as sorted rows in
 *            a sealed memfd
 *   probe    PROBE: load-probe's dlopen by ptrace; DYNPROBE: a dynamic
 *            probe planted or removed by ptrace; ATTACH: an attach's
 *            loads and calls by ptrace, and a JVM agent's load through
 *            the JVM's attach mechanism, or its undo (one request each)
 *
 * An owner's objects and lines inspectors are started as a pair, joined by
 * a socket of their own (descriptor 4 of each): the objects inspector hands
 * each object file it opened to the lines inspector (HANDOFF, with the
 * file's identity), and the daemon asks for a line table by that identity.
 * So the daemon never holds a descriptor of a file a process maps: closing
 * one could wait on a file system server a user runs (FUSE). The lines
 * inspector keeps no capability at all. If it lost a file (a pair that had
 * to make room for others), it says so, and the daemon reads the objects
 * of a process mapping it again, once, which hands it over again.
 *
 * An inspector is as hostile as the processes of the user it serves:
 * every reply is validated (ctl/daemon/wire/inspect_msg.c, fuzzed), and what
 * it says is used only for that user's processes.
 *
 * Transport: a SOCK_SEQPACKET socketpair, the inspector's end on
 * descriptor 3. Each message starts with struct st_insp_hdr; `len` counts
 * the whole message; at most one descriptor rides along. Requests carry an
 * id that the replies to them repeat. An inspector answers its requests in
 * order, each with zero or more OBJECT / LINE_TABLE / FOUND messages and
 * one DONE.
 */
#ifndef ST_INSPECT_PROTO_H
#define ST_INSPECT_PROTO_H

#include <linux/capability.h>
#include <stdint.h>

#define ST_INSPECTOR_ARG "--inspector"
#define ST_INSPECTOR_FD 3	 /* the daemon */
#define ST_INSPECTOR_PAIR_FD 4	 /* objects -> lines */
#define ST_INSP_HANDOFF_MAX 1024 /* object files a lines inspector holds */
#define ST_INSP_MSG_MAX 8192
#define ST_INSP_PATH_MAX 4096	 /* path bytes, NUL included */
#define ST_INSP_MAX_OBJECTS 4096 /* objects reported per process */
#define ST_INSP_BUILD_ID_MAX 64

enum st_insp_role {
	ST_INSP_ROLE_OBJECTS = 1,
	ST_INSP_ROLE_LINES = 2,
	ST_INSP_ROLE_PROBE = 3,
};

/*
 * The most an inspector of role, for a process of uid, may hold (bit n:
 * capability n; doc/control.md, "Known limits"): nothing, but
 * CAP_SYS_PTRACE for root's processes (the kernel lets an inspector read
 * or ptrace a process only with every capability the process holds, or
 * that one) and CAP_CHECKPOINT_RESTORE for the objects role (the one
 * /proc/PID/map_files needs). The lines role reads only files it is
 * handed: nothing. The daemon hands an inspector less where it can
 * (inspect.c: nothing at all for a process of another user namespace);
 * an inspector told more refuses to start (inspector.c).
 */
static inline uint64_t st_insp_caps_max(uint32_t role, uint32_t uid)
{
	uint64_t caps = 0;

	if (role != ST_INSP_ROLE_LINES && uid == 0)
		caps |= 1ull << CAP_SYS_PTRACE;
	if (role == ST_INSP_ROLE_OBJECTS)
		caps |= 1ull << CAP_CHECKPOINT_RESTORE;
	return caps;
}

enum st_insp_type {
	/* daemon -> inspector */
	ST_INSP_OBJECTS = 1, /* + pidfd: struct st_insp_target */
	ST_INSP_LINES,	     /* struct st_insp_lines_req */
	ST_INSP_PROBE,	     /* + pidfd: struct st_insp_target, then the library path */
	ST_INSP_DISCOVER,    /* + pidfd: struct st_insp_target */
	ST_INSP_TAKE_POOL,   /* + pidfd: struct st_insp_take_pool; FOUND + pool memfd */
	ST_INSP_DYNPROBE,    /* + pidfd: struct st_insp_target, the dynamic probe
			      * library's path, then a command (dynprobe/ctl.h) */
	ST_INSP_ATTACH,	     /* + pidfd: struct st_insp_attach, then its libraries */
	/* inspector -> daemon */
	ST_INSP_OBJECT = 16, /* struct st_insp_object, path, debug link */
	ST_INSP_LINE_TABLE,  /* + sealed memfd: struct st_insp_line_table */
	ST_INSP_FOUND,	     /* + status memfd: struct st_insp_found, then the exe path */
	ST_INSP_DONE,	     /* struct st_insp_done, then a message (NUL-terminated) */
	/* objects inspector -> lines inspector */
	ST_INSP_HANDOFF = 32, /* + object fd: struct st_insp_handoff */
};

/* A file's identity, as fstat() tells it: the change time cannot be set
 * back, so an identity names one content. */
struct st_insp_key {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct st_insp_hdr {
	uint32_t type;
	uint32_t len;
	uint64_t id;
};

/* The process a request is about, and who it must still belong to. */
struct st_insp_target {
	struct st_insp_hdr hdr;
	int32_t pid;
	uint32_t uid;
	uint32_t gid;
	uint32_t pad;
};

struct st_insp_lines_req {
	struct st_insp_hdr hdr;
	struct st_insp_key key; /* of an object the objects inspector handed over */
	uint64_t max_rows;	/* larger tables are refused */
	uint32_t build_id_len;
	uint8_t build_id[ST_INSP_BUILD_ID_MAX]; /* for /usr/lib/debug/.build-id/ */
	uint32_t pad;
};

/*
 * One loaded object (the mapping of file offset 0 of a regular file).
 * base: the load bias of a position-independent object, the lowest
 * segment address otherwise; memsz: the extent of the loadable segments
 * from there. Followed by the path and the debug link file name, each
 * NUL-terminated (path_len and link_len count the NUL; link_len 0: none).
 */
struct st_insp_object {
	struct st_insp_hdr hdr;
	struct st_insp_key key; /* of the file */
	uint64_t base, memsz;
	uint32_t is_pic;
	uint32_t crc; /* of the debug link */
	uint32_t build_id_len;
	uint8_t build_id[ST_INSP_BUILD_ID_MAX];
	uint16_t path_len, link_len;
};

/*
 * A line table: `rows` 64-bit values, sorted, each (address << 1) | start
 * where address is a file virtual address, start is 1 where a row starts
 * and 0 at the first address past a sequence (so at one address the end
 * of a sequence sorts before the start of the next). rows == 0 with no
 * descriptor: no line information.
 */
struct st_insp_line_table {
	struct st_insp_hdr hdr;
	uint64_t rows;
};

/* An object file, from the objects to the lines inspector. */
struct st_insp_handoff {
	struct st_insp_hdr hdr;
	struct st_insp_key key;
};

/*
 * TAKE_POOL: the buffer pool a process offers in its control page (it has
 * no connection to hand it over): descriptor `fd` of the process, which
 * must be a memfd named shimtrace-pool, sealed, of `size` bytes. Answered
 * by a FOUND carrying it.
 */
/*
 * ATTACH: load the tracer into a process started without it and redirect
 * its calls (ctl/inspect/attach.c), or undo that (detach). Followed by
 * nlibs NUL-terminated absolute paths: to attach, libshimtrace-attach.so,
 * libshimtrace.so, then the families; to detach, libshimtrace.so. With
 * jvm (an attach), two more strings: a JVMTI agent's absolute path and its
 * options, loaded through the JVM's attach mechanism once the rest is
 * (ctl/inspect/jvmattach.c). The DONE's count is the number of calls (GOT
 * slots) redirected, or put back.
 */
struct st_insp_attach {
	struct st_insp_target t;
	uint32_t detach;
	uint32_t nlibs;
	/* for the process's tracer (struct st_abi_attach): the daemon's
	 * directory, the depth of its call stacks (1 + frames; 0: its own
	 * environment's) and their sampling of allocations (0: its own) */
	char rundir[96];
	uint32_t stack_depth;
	uint32_t jvm; /* 1: the agent's path and options follow the libraries */
	uint64_t stack_sample;
};

struct st_insp_take_pool {
	struct st_insp_target t;
	int32_t fd;
	uint32_t pad;
	uint64_t size;
};

/* A process found running: its parent and name, then its executable. */
struct st_insp_found {
	struct st_insp_hdr hdr;
	int32_t ppid;
	char name[16];
	uint32_t pad;
};

/*
 * The end of the answer to a request. status: 0, or a negative errno;
 * for PROBE the command's exit status (ctl/common/control.h). The text names the
 * problem (or, for PROBE, what was done).
 */
struct st_insp_done {
	struct st_insp_hdr hdr;
	int32_t status;
	uint32_t count; /* OBJECT or FOUND messages sent before */
};

#endif /* ST_INSPECT_PROTO_H */
