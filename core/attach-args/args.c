/*
 * libshimtrace-attach.so: the arguments of an attach. The inspector that
 * attaches a running process (ctl/inspect/attach.c) loads this library
 * first, with RTLD_GLOBAL, fills its one symbol, then loads the core,
 * whose weak reference to the symbol (core/registration.c) finds it
 * there: the process then registers with the daemon of the attach, not
 * with those its environment names. A library of its own because the
 * core's constructor runs as the core is loaded, before anything could be
 * written into the core itself; nothing else loads it, so a process
 * started with the preload has no such symbol.
 */
#include "core/abi.h"

__attribute__((visibility("default"))) struct st_abi_attach st_attach_args;
