/*
 * libFuzzer harness for what the daemon reads in a process's buffer pool
 * (ctl/daemon/wire/ring.c, the record checks and the times' clamping of
 * ctl/daemon/drain/consumer.c, evclass.c's payload checks): forged slot and
 * sub-buffer headers, sequence numbers, commit offsets, counts, records
 * and timestamps must never make the consumer read out of the pool or
 * write out of its buffers, nor reach the trace as anything but valid
 * records in non-decreasing, bounded time (checked by consume.c's
 * stand-in trace). Run it with AddressSanitizer; see README.md here.
 */
#include <stddef.h>
#include <stdint.h>

#include "tests/fuzz/consume.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_run(data, size);
	return 0;
}
