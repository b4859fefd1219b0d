/*
 * The session shimtrace top follows (see topsession.h), through the
 * control protocol as the control verbs speak it (ctl/common/client.h):
 * the daemon's replies are read from `status --json`, its error lines
 * said as top's.
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctl/cli/daemoncall.h"
#include "ctl/cli/topsession.h"
#include "ctl/common/checks.h"
#include "ctl/common/cli.h"
#include "ctl/common/client.h"
#include "ctl/common/control.h"

static const char *V = "top";

/* A call to the daemon, its errors said as top's. */
static int call(const char *verb, const char *const *items, size_t n, bool autostart,
		char **text, bool quiet)
{
	return st_daemon_call(V, verb, items, n, autostart, text, quiet);
}

/* The session's entry of `status --json` (its name, then what follows):
 * 0, 1 when there is none (or no daemon), -1 after a message. */
static int status_of(struct st_topsession *s, const char *name, bool quiet)
{
	char item[96], *text = NULL;
	const char *items[] = { item, "json=1" }, *ses;
	int ret = 1;

	snprintf(item, sizeof(item), "session=%s", name);
	if (call("status", items, 2, false, &text, true) != ST_EXIT_OK || !text) {
		free(text);
		return 1;
	}
	ses = strstr(text, "\"sessions\": [");
	if (ses && st_json_string_at(ses, "state", s->state, sizeof(s->state)) == 0) {
		ret = 0;
		s->lost = st_json_number_at(ses, "lost");
		if (!s->dir[0] && st_json_string_at(ses, "output", s->dir, sizeof(s->dir)) < 0) {
			if (!quiet)
				st_err(V, "session %s: its trace directory cannot be told from the "
					  "daemon's reply (not UTF-8?): give it as DIR", name);
			ret = -1;
		}
	}
	free(text);
	return ret;
}

int st_topsession_find(struct st_topsession *s, const char *name)
{
	memset(s, 0, sizeof(*s));
	if (!st_session_name_ok(name) && !strchr(name, '@'))
		return 1;
	snprintf(s->name, sizeof(s->name), "%s", name);
	return status_of(s, name, false);
}

void st_topsession_poll(struct st_topsession *s)
{
	s->gone = status_of(s, s->name, true) != 0;
}

/* Removes the trace top made in its own directory: the files in it, then
 * it. */
static void remove_trace(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (e->d_type == DT_REG)
			unlinkat(fd, e->d_name, 0);
	closedir(d);
	rmdir(dir);
}

/* Sends verb for the session: its status. */
static int session_verb(const struct st_topsession *s, const char *verb, bool quiet)
{
	char item[96];
	const char *items[] = { item };

	snprintf(item, sizeof(item), "session=%s", s->name);
	return call(verb, items, 1, false, NULL, quiet);
}

int st_topsession_start(struct st_topsession *s, const struct st_topsession_rules *rules)
{
	const char *items[8 + 64];
	char name[80], out[PATH_MAX + 16], um[16], ses[96], pid[32], uid[32];
	char pats[64][160];
	size_t n = 0;

	memset(s, 0, sizeof(*s));
	snprintf(s->name, sizeof(s->name), "top_%d", (int)getpid());
	s->own = true;
	if (rules->output) {
		if (st_absolute_path(rules->output, s->dir, sizeof(s->dir)) < 0) {
			st_err(V, "-o: bad directory %s", rules->output);
			return -1;
		}
	} else {
		const char *tmp = getenv("TMPDIR");

		snprintf(s->dir, sizeof(s->dir), "%s/shimtrace-top-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(s->dir)) {
			st_err(V, "cannot make a directory for the trace in %s: %m",
			       tmp && *tmp ? tmp : "/tmp");
			return -1;
		}
		s->made_dir = true;
	}
	snprintf(name, sizeof(name), "name=%s", s->name);
	snprintf(out, sizeof(out), "output=%s", s->dir);
	snprintf(um, sizeof(um), "umask=%04o", (unsigned)st_user_umask());
	items[0] = name;
	items[1] = out;
	items[2] = um;
	if (call("create", items, 3, true, NULL, false) != ST_EXIT_OK) {
		if (s->made_dir)
			rmdir(s->dir);
		return -1;
	}
	snprintf(ses, sizeof(ses), "session=%s", s->name);
	items[n++] = ses;
	for (uint32_t i = 0; i < rules->npatterns && i < 64; i++) {
		snprintf(pats[i], sizeof(pats[i]), "pattern=%s", rules->patterns[i]);
		items[n++] = pats[i];
	}
	if (rules->pids) {
		snprintf(pid, sizeof(pid), "pid=%s", rules->pids);
		items[n++] = pid;
	}
	if (rules->uid) {
		snprintf(uid, sizeof(uid), "uid=%s", rules->uid);
		items[n++] = uid;
	}
	if (call("enable", items, n, false, NULL, false) != ST_EXIT_OK ||
	    session_verb(s, "start", false) != ST_EXIT_OK) {
		st_topsession_end(s);
		return -1;
	}
	snprintf(s->state, sizeof(s->state), "started");
	return 0;
}

void st_topsession_end(struct st_topsession *s)
{
	if (!s->own)
		return;
	/* (stop completes the trace; one never started needs none) */
	session_verb(s, "stop", true);
	session_verb(s, "destroy", true);
	if (s->made_dir)
		remove_trace(s->dir);
	s->own = false;
}
