/*
 * Process-wide state every layer reads: who we are (st__live), the
 * calling thread's tracer state (st__tls), and the one-line warnings.
 */
#include <string.h>

#include "internal.h"
#include "sys.h"

static struct st__live live_unset; /* pid 0: nothing is written */
struct st__live *st__live = &live_unset;

__thread struct st__thread st__tls __attribute__((tls_model("initial-exec")));

void st__warn_once(int *once, const char *msg)
{
	if (st_xchg_relaxed(once, 1))
		return;
	st__sys3(SYS_write, 2, msg, strlen(msg));
	st__sys3(SYS_write, 2, "\n", 1);
}
