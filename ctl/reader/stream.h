/*
 * One stream file of a trace (stream.c): its packets, checked at open,
 * and its records, decoded one at a time as the merge (reader.c) asks.
 */
#ifndef ST_READER_STREAM_H
#define ST_READER_STREAM_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/reader/desc.h"
#include "ctl/reader/fast.h"
#include "ctl/reader/reader.h"
#include "ctl/reader/window.h"

struct st_reader;

/* A packet's header and context, checked. Offsets in bytes. */
struct st__packet {
	uint64_t off;	  /* packet start in the file */
	uint64_t data;	  /* first record, from the packet start */
	uint64_t content; /* end of the records, from the packet start */
	uint64_t size;	  /* whole packet, padding included */
	const struct st_stream_class *cls;
	bool has_begin, has_end, has_discarded, has_instance;
	uint64_t ts_begin, ts_end;
	uint64_t discarded;
	uint64_t discarded_mask; /* the counter wraps at this + 1 */
	uint64_t instance_id;
	int32_t pid, tid;
};

/* What must only grow along a stream, checked packet after packet. */
struct st__order {
	bool seen;	    /* a packet was read */
	uint64_t last_ts;   /* latest timestamp: nothing may go below it */
	uint64_t discarded; /* events_discarded of the previous packet */
	uint64_t prev_end;  /* timestamp_end of the previous packet */
};

struct st__stream {
	struct st_stream_info info;
	struct st_reader *r;
	char *file;
	struct st__window win; /* the file's bytes */
	uint64_t size;
	uint64_t end; /* where its whole packets end: what follows is damaged */
	/* where reading is */
	uint64_t next_pkt; /* file offset of the next packet */
	bool in_packet;
	struct st__packet pkt;
	const uint8_t *bytes; /* the packet's, while in_packet */
	const struct st__fast_stream *fast; /* its class's, NULL if none */
	uint64_t pos;	/* next record, from the packet start */
	uint64_t clock; /* current clock value, cycles */
	struct st__order order;
	/* the head item: the next one this stream gives */
	enum st_item_kind head; /* 0 at the end */
	int64_t key;		/* its time, ns */
	struct st_event ev;
	struct st_lost lost;
	/* decoded values: packet header, packet context, event header,
	 * event context, payload; max_fields each */
	struct st_value *ph, *pc, *eh, *ec, *fields;
};

/* Opens the file and checks every packet header; fills s->info. */
int st__stream_open(struct st_reader *r, struct st__stream *s, int dirfd, const char *file);
/* Moves to the next item: 1 (s->head set), 0 at the end, <0 on error. */
int st__stream_advance(struct st__stream *s);
void st__stream_close(struct st__stream *s);

#endif
