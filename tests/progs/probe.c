/*
 * libtestprobe.so: a probe library for `shimtrace load-probe`. It declares
 * a provider of its own; its constructor fires one event, so a session that
 * enabled testprobe:* before the load records it.
 */
#include <shimtrace/tracepoint.h>
#include <unistd.h>

#define TESTPROBE_TRACEPOINTS(TP, F) \
	TP(testprobe, loaded, F(S32, pid) F(STRING, what)) \
	TP(testprobe, unused, F(U64, value))
ST_PROVIDER_DECLARE(testprobe, TESTPROBE_TRACEPOINTS)
ST_PROVIDER_DEFINE(testprobe, TESTPROBE_TRACEPOINTS)

static void __attribute__((constructor)) probe_loaded(void)
{
	st_tracepoint(testprobe, loaded, (int32_t)getpid(), "hello from the probe");
}
