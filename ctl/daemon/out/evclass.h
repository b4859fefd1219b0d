/*
 * Event classes (evclass.c): interned daemon-wide, counted, and declared
 * in a trace's metadata.
 */
#ifndef ST_DAEMON_OUT_EVCLASS_H
#define ST_DAEMON_OUT_EVCLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/abi.h"
#include "ctl/daemon/wire/msg.h"

/* Field type only the daemon writes: a byte sequence (u64 length, bytes). */
#define ST_TYPE_BYTES 100

/* A count for one uid: processes of the uid holding a class (st_evclass),
 * classes declared for the uid's processes (st_trace). */
struct st_evclass_user {
	uid_t uid;
	uint32_t n;
};

struct st_evclass {
	uint32_t id; /* in the registry: internal, never written anywhere */
	char provider[ST_ABI_NAME_MAX];
	char name[ST_ABI_NAME_MAX];
	uint32_t nfields;
	struct st_evfield *fields;
	int32_t fixed_size;  /* payload bytes when every field is fixed, else -1 */
	uint32_t decl_bytes; /* of its metadata declaration, at most */
	uint32_t refs;	     /* processes and traces holding it */
	struct st_evclass_user *users;
	uint32_t nusers;
	uint32_t hash;
	struct st_evclass *hnext;
};

struct st_evreg {
	struct st_evclass **v; /* by id; NULL where freed */
	uint32_t n, cap, live;
	uint32_t *free_ids;
	uint32_t nfree, free_cap;
	struct st_evclass **hash; /* by provider:name */
	uint32_t hsize;
};

/* Ids of the classes the daemon writes itself: the same in every trace. */
enum st_builtin_class {
	ST_EV_STATEDUMP_START,
	ST_EV_STATEDUMP_BIN_INFO,
	ST_EV_STATEDUMP_BUILD_ID,
	ST_EV_STATEDUMP_DEBUG_LINK,
	ST_EV_STATEDUMP_END,
	ST_EV_LIB_LOAD,
	ST_EV_LIB_BUILD_ID,
	ST_EV_LIB_DEBUG_LINK,
	ST_EV_LIB_UNLOAD,
	ST_EV_PROCESS,
	ST_EV_PROCESS_END,
	ST_EV_BUILTIN_COUNT
};

int st_evreg_init(struct st_evreg *r);
void st_evreg_free(struct st_evreg *r);
/* The class with this name and these fields, or NULL. */
struct st_evclass *st_evreg_find(const struct st_evreg *r, const char *provider, const char *name,
				 const struct st_evfield *fields, uint32_t nfields);
/* The same, created (with no reference) if new; NULL when out of memory. */
struct st_evclass *st_evreg_intern(struct st_evreg *r, const char *provider, const char *name,
				   const struct st_evfield *fields, uint32_t nfields);
const struct st_evclass *st_evreg_get(const struct st_evreg *r, uint32_t id);
void st_evclass_ref(struct st_evclass *c);
/* Drops a reference; the last one frees the class. */
void st_evclass_unref(struct st_evreg *r, struct st_evclass *c);
/* Counts one more (less) process of uid holding c; true when c is new to
 * (gone from) uid. */
bool st_evclass_user_add(struct st_evclass *c, uid_t uid);
bool st_evclass_user_del(struct st_evclass *c, uid_t uid);
bool st_evclass_used_by(const struct st_evclass *c, uid_t uid);
/* uid's count in the list v of n: found, or appended at 0 (NULL: out of
 * memory). */
struct st_evclass_user *st_uid_count(struct st_evclass_user **v, uint32_t *n, uid_t uid);
/*
 * Copies the fields of a record of class c from src (at most avail bytes,
 * memory the process may change meanwhile) to dst and checks the copy;
 * their size, or -1 if they do not fit or a string is unterminated or too
 * long.
 */
int64_t st_evclass_payload_copy(const struct st_evclass *c, const uint8_t *src, uint64_t avail,
				uint8_t *dst);

/* The metadata declaration of class c under event id; like snprintf. */
size_t st_class_decl(char *buf, size_t cap, const struct st_evclass *c, uint32_t id);

#endif
