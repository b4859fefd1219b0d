/*
 * What an inspector and the dynamic probe library say to each other
 * (probes.c; ctl/inspect/dynprobe.c). The inspector calls, by ptrace, the
 * library's one export:
 *
 *     const struct dp_reply *st_dynprobe_ctl(const char *command);
 *
 * with a command of one line:
 *
 *     add function NAME SPEC   plan a function-entry probe (NAME may be "-")
 *     add probe NAME SPEC      plan a bare probe
 *     remove NAME              plan the removal of probe NAME
 *
 * The library resolves, relocates and writes the trampoline, registers
 * the tracepoint, and answers what to write where; it writes nothing into
 * the probed code. The inspector writes `bytes` at `at` while every thread
 * of the process is stopped outside [at, at + len), then `new_state` at
 * `state_addr`, so the library's table says what the code holds.
 */
#ifndef ST_DYNPROBE_CTL_H
#define ST_DYNPROBE_CTL_H

#include <stdint.h>

#define DP_CTL_SYMBOL "st_dynprobe_ctl"
#define DP_CTL_MAX 512	 /* a command, NUL included */
#define DP_PATCH_MAX 24	 /* bytes a probe replaces, at most */
#define DP_MSG_MAX 400
/* Ends an inspector's answer when it loaded the library for the probe
 * (the daemon then reads the process's objects again). */
#define DP_LOADED_NOTE " (libshimtrace-dynprobe.so loaded)"

enum dp_state {
	DP_EMPTY,    /* a free entry */
	DP_PREPARED, /* trampoline ready, code not patched */
	DP_PLANTED,  /* the jump is in the code */
	DP_REMOVED,  /* original code back; the tracepoint stays registered */
};

struct dp_reply {
	int32_t status;	     /* 0, or -errno: msg says why */
	uint32_t len;	     /* bytes to write at `at`; 0: nothing to write */
	uint64_t at;
	uint64_t state_addr; /* a uint32_t to set to new_state once written */
	uint32_t new_state;
	uint32_t pad;
	uint8_t bytes[DP_PATCH_MAX];
	uint8_t expect[DP_PATCH_MAX]; /* what `at` must hold now (checked) */
	char name[64];	     /* the tracepoint: probe:NAME */
	char msg[DP_MSG_MAX]; /* one line: how it was planned, or why not */
};

#endif /* ST_DYNPROBE_CTL_H */
