/* shimtrace view: WIP placeholder replaced by the reader (not committed). */
#include "ctl/cli.h"
int st_cmd_view(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	st_err("view", "not implemented yet");
	return 1;
}
