/*
 * Per-user buffers (userpool.c): for a session with --buffers per-user,
 * one per-CPU pool per user, made by the daemon and written by every
 * traced process of that user.
 */
#ifndef ST_DAEMON_MODEL_USERPOOL_H
#define ST_DAEMON_MODEL_USERPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct st_daemon;
struct st_proc;
struct st_session;

struct st_user_pool {
	struct st_user_pool *next; /* the daemon's (d->user_pools) */
	uint32_t session;	   /* its index */
	uint32_t generation;	   /* its generation */
	uid_t uid;
	int fd;			   /* the pool's memfd, sent to each process */
	uint64_t bytes;		   /* in the memory bounds */
	/* The stand-in process record that holds the pool for the consumer
	 * (its slot states, streams, statistics, warnings), never in the
	 * daemon's list of processes. */
	struct st_proc *holder;
	/* The processes that write it, by writer number - 1 (NULL: ended). */
	struct st_proc **writers;
	uint32_t nwriters, writers_cap;
	uint32_t held; /* ended processes kept for their records */
};

/*
 * Gives process p the pool of its user in session ses (made first if
 * there is none): the pool's memfd sent on p's connection, before the
 * caller configures the session in p's control page. False when it could
 * not be (no connection, no memory within the bounds, the socket full):
 * the session is then configured per-process for p.
 */
bool st_user_pool_give(struct st_daemon *d, struct st_session *ses, struct st_proc *p);
/* The process that writer number n of pool up names, or NULL. */
static inline struct st_proc *st_user_pool_writer(const struct st_user_pool *up, uint32_t n)
{
	return n >= 1 && n <= up->nwriters ? up->writers[n - 1] : NULL;
}
/* The pool process p writes in session s, or NULL. */
struct st_user_pool *st_user_pool_of(const struct st_daemon *d, const struct st_proc *p,
				     uint32_t s);
/*
 * Overwrite mode: process p ended, and its records stay in its user's
 * rings after the drain that wrote them to the trace. A snapshot reads
 * them with its event classes: its record is kept (st_user_pools_held)
 * until every CPU's ring went round once since, or the session is gone;
 * at most USER_POOL_HELD_MAX processes a pool.
 */
#define USER_POOL_HELD_MAX 64
void st_user_pools_hold(struct st_daemon *d, struct st_proc *p);
/* Whether ended process p is still kept for its records (false once they
 * are overwritten, then for good). */
bool st_user_pools_held(struct st_daemon *d, struct st_proc *p);
/* Process p's record goes: its writer numbers are free. */
void st_user_pools_forget(struct st_daemon *d, struct st_proc *p);
/* Session ses is destroyed: its pools freed, their memory given back. */
void st_user_pools_destroy(struct st_daemon *d, struct st_session *ses);
/* Whether up is a pool of session ses (as it is now). */
bool st_user_pool_serves(const struct st_user_pool *up, const struct st_session *ses);

#endif
