/*
 * Sessions that attach (sessattach.c): processes their --pid rules name,
 * started without the preload, attached and detached with them.
 */
#ifndef ST_DAEMON_CMD_SESSATTACH_H
#define ST_DAEMON_CMD_SESSATTACH_H

#include <stdint.h>
#include <sys/types.h>

#include "ctl/daemon/model/state.h"
#include "ctl/daemon/wire/request.h"

struct st_session;

/*
 * Attaches, for request r (its verb, its requester), those of the n
 * processes pids that need it (not registered with this daemon, or
 * detached since) to session ses (one attached already is ses's too
 * now), loading the families
 * of wrap ("all" or a list; NULL: those of the np patterns). Returns
 * ST_CTL_DEFERRED (r is answered once every process is, with status if
 * all were attached, else 1), or status when n is 0, or an exit status
 * after an error line (nothing attached).
 */
int st_sessattach(struct st_daemon *d, struct st_request *r, struct st_session *ses,
		  const pid_t *pids, uint32_t n, const char *const *patterns, uint32_t np,
		  const char *wrap, int status);
/* Session ses stops (or goes): the processes it alone attached are
 * detached. */
void st_sessattach_stopped(struct st_daemon *d, const struct st_session *ses);
/* The daemon ends: every process attached is detached (the loop turns
 * until they are, 5 s at most). */
void st_sessattach_fini(struct st_daemon *d);

#endif /* ST_DAEMON_CMD_SESSATTACH_H */
