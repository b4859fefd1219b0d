/*
 * What a wrapper family tells the core so that attach can send a running
 * process's calls to it (core/attach.c): each function it wraps, the
 * wrapper, and where the wrapper keeps the real function. The generated
 * code of a family (wrappers/gen-wrappers.c) offers its table from a
 * constructor, preloaded or loaded late alike; only attach reads it.
 */
#ifndef ST_CORE_ATTACH_H
#define ST_CORE_ATTACH_H

#include <stdint.h>

#include <shimtrace/tracepoint.h>

struct st__wrap {
	const char *name; /* the function, as the family exports it */
	/* the family's function, reached through a local alias: in a
	 * library loaded late, the exported name resolves to the real one */
	void *wrapper;
	/* where the wrapper keeps the real function (set before the first
	 * call is redirected); NULL for a wrapper that keeps none (it calls
	 * other wrappers' real functions) */
	void **real;
	/* the core's: the function the calls redirected to the wrapper
	 * called before (attach.c; written under its lock) */
	void *chosen;
};

/* A family's table, from its constructor (the loader runs constructors
 * one at a time). Kept for the life of the process: the families are
 * never unloaded (-z nodelete). */
ST_API void st__attach_offer(struct st__wrap *wraps, uint32_t n);

/*
 * The entry points a ptrace'd call runs in the process (ctl/inspect/
 * attach.c), at a safe point of one of its threads. st_attach: the
 * process registers with the daemon of rundir (if it is not connected
 * to it already), then every GOT slot of every loaded object that calls
 * a function a loaded family wraps is pointed at the wrapper; objects
 * loaded later are redirected by the dlopen hook. Returns the number of
 * slots this call redirected (0 when all were already: attaching twice
 * changes nothing), or -errno. st_attach_undo: every slot redirected
 * that still holds the wrapper gets its old value back, later dlopens
 * are left alone; returns how many, or -errno.
 */
ST_API int st_attach(const char *rundir);
ST_API int st_attach_undo(void);

#endif /* ST_CORE_ATTACH_H */
