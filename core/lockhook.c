/*
 * The lock wait hook (<shimtrace/tracepoint.h>, st_lock_wait_hook): a
 * runtime that has locks of its own above the wrapped ones, the JVM with
 * its monitors, sets it when it loads, so that a thread about to block on
 * a wrapped lock also says which of the runtime's locks it holds. It lives
 * in the core, which every wrapper family links, so that a family and the
 * runtime's agent loaded in any order meet here.
 */
#include "internal.h"

ST_API void (*st_lock_wait_hook)(const void *site);
