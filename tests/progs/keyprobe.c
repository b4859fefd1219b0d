/*
 * libkeyprobe.so: a provider library that a program loads late (dlopen),
 * bringing libshimtrace.so with it: latekeys.test. keyprobe_tick() writes
 * one event.
 */
#include <stdint.h>

#include <shimtrace/tracepoint.h>

#define KEYPROBE_TRACEPOINTS(TP, F) TP(keyprobe, tick, F(U32, n))
ST_PROVIDER_DECLARE(keyprobe, KEYPROBE_TRACEPOINTS)
ST_PROVIDER_DEFINE(keyprobe, KEYPROBE_TRACEPOINTS)

void keyprobe_tick(uint32_t n);

void keyprobe_tick(uint32_t n)
{
	st_tracepoint(keyprobe, tick, n);
}
