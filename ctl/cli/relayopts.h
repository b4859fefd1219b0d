/*
 * The relay daemon options of record and create (relayopts.c): --set-url,
 * or --ctrl-url with --data-url, checked and asked before anything runs.
 */
#ifndef ST_CLI_RELAYOPTS_H
#define ST_CLI_RELAYOPTS_H

#include <stdbool.h>

#include "ctl/common/relayurl.h"

/*
 * The relay the options name, into *u, once it answered: 1; 0 when none
 * is given; -1 after a one-line error of verb's (the options together
 * wrong, a URL that is not one, -o given too (has_output), or no relay
 * answering there).
 */
int st_relay_opts(const char *verb, const char *set_url, const char *ctrl_url,
		  const char *data_url, bool has_output, struct st_relay_url *u);

#endif
