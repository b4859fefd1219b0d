/*
 * The start of every packet of a trace the daemon writes (trace.c), and
 * what reads its packets back (relaysend.c): the packet header and
 * context, little-endian and byte-packed, as the trace's metadata
 * declares them.
 */
#ifndef ST_DAEMON_OUT_PACKET_H
#define ST_DAEMON_OUT_PACKET_H

#include <stdint.h>

#define CTF_MAGIC 0xC1FC1FC1u

struct __attribute__((packed)) packet_prefix {
	uint32_t magic;
	uint8_t uuid[16];
	uint32_t stream_id;
	uint64_t stream_instance_id;
	uint64_t timestamp_begin;
	uint64_t timestamp_end;
	uint64_t content_size; /* bits */
	uint64_t packet_size;  /* bits */
	uint64_t packet_seq_num;
	uint64_t events_discarded;
	int32_t pid;
	int32_t tid;
};

#endif
