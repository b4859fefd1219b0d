/*
 * --progress and --no-progress (see progressopts.h): the last one given
 * decides.
 */
#include "ctl/cli/progressopts.h"

bool st_progress_opt(const struct st_opt *o, enum st_progress_mode *mode)
{
	if (st_opt_is(o, "progress"))
		*mode = ST_PROGRESS_ON;
	else if (st_opt_is(o, "no-progress"))
		*mode = ST_PROGRESS_OFF;
	else
		return false;
	return true;
}
