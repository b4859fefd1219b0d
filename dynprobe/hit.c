/*
 * The event a dynamic probe writes when its trampoline finds it enabled:
 * probe:NAME, through the same st_event_write every tracepoint uses. A
 * function-entry probe records the first six integer arguments (rdi,
 * rsi, rdx, rcx, r8, r9 as the trampoline saved them) as arg0..arg5 and
 * the caller (the return address at the top of the stack) as the event's
 * call site; a bare probe, its own address and no field.
 *
 * Runs on whatever thread hits the probe, inside the probed code: no
 * lock, no allocation, no system call of its own, errno untouched (as
 * st_event_write promises).
 */
#include <string.h>

#include "dynprobe/probes.h"
#include "dynprobe/tramp.h"

struct st_provider_state dp_state;

const struct st_field dp_fields_function[] = {
	{ "arg0", ST_TYPE_U64 }, { "arg1", ST_TYPE_U64 }, { "arg2", ST_TYPE_U64 },
	{ "arg3", ST_TYPE_U64 }, { "arg4", ST_TYPE_U64 }, { "arg5", ST_TYPE_U64 },
	{ NULL, 0 },
};
const struct st_field dp_fields_bare[] = { { NULL, 0 } };

void dp_hit(void *probe, uint64_t *frame)
{
	const struct dp_probe *p = probe;
	uint32_t mask = __atomic_load_n(&p->tp.state->mask[p->tp.slot], __ATOMIC_RELAXED);
	uint64_t buf[6 + ST_PAYLOAD_SLACK / 8], caller;
	uint64_t ts;

	if (!mask)
		return;
	ts = st_clock_read();
	if (p->kind == DP_FUNCTION) {
		buf[0] = frame[DP_RDI];
		buf[1] = frame[DP_RSI];
		buf[2] = frame[DP_RDX];
		buf[3] = frame[DP_RCX];
		buf[4] = frame[DP_R8];
		buf[5] = frame[DP_R9];
		memcpy(&caller, (const uint8_t *)frame + DP_FRAME_RSP, 8);
		st_event_write(&p->tp, mask, ts, (const void *)(uintptr_t)caller, buf, 48);
	} else {
		st_event_write(&p->tp, mask, ts, (const void *)(uintptr_t)p->at, buf, 0);
	}
}
