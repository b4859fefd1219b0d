/*
 * --set-url, --ctrl-url and --data-url (see relayopts.h): the same rules
 * and words for record and create.
 */
#include <stdio.h>

#include "ctl/cli/relayopts.h"
#include "ctl/common/cli.h"
#include "ctl/daemon/wire/relayd.h"

#define ASK_MS 3000 /* a relay that does not answer in this time is not there */

int st_relay_opts(const char *verb, const char *set_url, const char *ctrl_url,
		  const char *data_url, bool has_output, struct st_relay_url *u)
{
	struct st_relayd probe;
	char why[512];
	int ret;

	if (!set_url && !ctrl_url && !data_url)
		return 0;
	if (set_url ? ctrl_url || data_url : !ctrl_url || !data_url) {
		st_err(verb, "--ctrl-url and --data-url go together, instead of --set-url");
		return -1;
	}
	if (has_output) {
		st_err(verb, "-o and --set-url exclude each other, as in lttng");
		return -1;
	}
	ret = set_url ? st_relay_url_parse(set_url, u, why, sizeof(why))
		      : st_relay_urls_parse(ctrl_url, data_url, u, why, sizeof(why));
	if (ret < 0) {
		st_err(verb, "%s: %s", set_url ? "--set-url" : "--ctrl-url/--data-url", why);
		return -1;
	}
	ret = st_relayd_connect(&probe, u, ASK_MS);
	if (ret < 0)
		st_err(verb, "%s %s: %s", set_url ? "--set-url" : "--ctrl-url",
		       set_url ? set_url : ctrl_url, probe.err);
	st_relayd_close(&probe);
	return ret < 0 ? -1 : 1;
}
