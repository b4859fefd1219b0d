/*
 * One stream file of a trace (stream.c): its packets, checked at open,
 * and its records, decoded one at a time as the merge (reader.c) asks;
 * when the trace is followed (follow.h), from where the previous open
 * stopped, and up to where it stops.
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
	/* following (follow.h): the order before the current packet, the
	 * state before the head record, and where a resumed stream goes on
	 * inside its first packet */
	struct st__order pkt_order;
	struct {
		uint64_t pos, clock, last_ts;
	} mark;
	bool resume_inside;
	uint64_t resume_pos, resume_clock, resume_last_ts;
	uint64_t tail; /* the latest time of its whole packets, cycles */
	bool dead;     /* damage ended its reading */
	/* the head item: the next one this stream gives */
	enum st_item_kind head; /* 0 at the end */
	int64_t key;		/* its time, ns */
	struct st_event ev;
	struct st_lost lost;
	/* decoded values: packet header, packet context, event header,
	 * event context, payload; max_fields each */
	struct st_value *ph, *pc, *eh, *ec, *fields;
};

struct st__resume;

/* Opens the file and takes its size (what is read of it: a followed trace
 * grows), before the metadata is read. */
int st__stream_file(struct st_reader *r, struct st__stream *s, int dirfd, const char *file);
/* Checks every packet header from the start, or from where `from` says
 * the previous open stopped (NULL: the start); fills s->info. In a
 * followed trace a packet cut short at the end of the file ends what is
 * read, without damage: it is not all there yet. */
int st__stream_scan(struct st__stream *s, const struct st__resume *from);
/* Where the next open of a followed trace goes on: at the head item, not
 * given yet, or where the stream's readable packets end. */
void st__stream_pause(const struct st__stream *s, struct st__resume *to);
/* Moves to the next item: 1 (s->head set), 0 at the end, <0 on error. */
int st__stream_advance(struct st__stream *s);
void st__stream_close(struct st__stream *s);

#endif
