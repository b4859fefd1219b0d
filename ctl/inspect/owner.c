/*
 * Becoming the owner (see owner.h), before anything is read from a traced
 * process: credentials switched to the owner's uid, gid and groups (when
 * started by root), capabilities cut to those the daemon chose as far as
 * the daemon holds them (a kernel before 5.9 has no
 * CAP_CHECKPOINT_RESTORE: map_files is then refused and objects are opened
 * by path with the checks of st_insp_open_mapped; a daemon that is not
 * root hands none); no-new-privs and not dumpable. Then the inspector
 * checks what it holds: its uids (and, started by root, gids and groups)
 * those it was told, no capability but those chosen in its effective,
 * permitted or inheritable set, none ambient.
 *
 * The bounding set stays the daemon's: with no-new-privs, an execve()
 * gains nothing from it (no setuid bit, no file capability), and the
 * daemon may hold no CAP_SETPCAP to shrink it (the unit does not grant it).
 */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ctl/inspect/owner.h"

/* Keeps exactly the capabilities of `keep` (bit n: capability n), in the
 * permitted and effective sets; 0 or -1. */
static int caps_set(uint64_t keep)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	d[0].effective = d[0].permitted = (uint32_t)keep;
	d[1].effective = d[1].permitted = (uint32_t)(keep >> 32);
	return (int)syscall(SYS_capset, &h, d);
}

/* The capabilities of this process now: effective, permitted and
 * inheritable sets; 0 or -1. */
static int caps_get(uint64_t *eff, uint64_t *prm, uint64_t *inh)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];

	memset(d, 0, sizeof(d));
	*eff = *prm = *inh = 0;
	if (syscall(SYS_capget, &h, d) < 0)
		return -1;
	*eff = (uint64_t)d[0].effective | (uint64_t)d[1].effective << 32;
	*prm = (uint64_t)d[0].permitted | (uint64_t)d[1].permitted << 32;
	*inh = (uint64_t)d[0].inheritable | (uint64_t)d[1].inheritable << 32;
	return 0;
}

/* (errno as the step left it) */
static int failed(const char **what, const char *step)
{
	*what = step;
	return -1;
}

int st_insp_become(const struct st_insp_owner *o, const char **what)
{
	uint64_t want = o->caps, eff, prm, inh;

	if (geteuid() == 0) {
		if (setgroups((size_t)o->ngroups, o->groups) < 0)
			return failed(what, "setgroups");
		if (setresgid(o->gid, o->gid, o->gid) < 0)
			return failed(what, "setresgid");
		/* keep the permitted set across the uid change, then trim it */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
			return failed(what, "PR_SET_KEEPCAPS");
		if (setresuid(o->uid, o->uid, o->uid) < 0)
			return failed(what, "setresuid");
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
		/* A kernel without CAP_CHECKPOINT_RESTORE (before 5.9), or a
		 * bounding set without it, refuses it: go on without, objects
		 * are then opened by path. (What we were told, as far as we
		 * hold it: under a bounding set we may hold less.) */
		caps_get(&eff, &prm, &inh);
		if (caps_set(want & prm) < 0 && caps_set(0) < 0)
			return failed(what, "capset");
	} else if (geteuid() != o->uid) {
		/* a daemon that is not root serves its own user only */
		errno = EPERM;
		return failed(what, "not the user to serve");
	} else if (caps_set(0) < 0) {
		return failed(what, "capset");
	}
	/* (none ambient: they would be cleared with the inheritable set, but
	 * say it) */
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return failed(what, "PR_SET_NO_NEW_PRIVS");
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return 0;
}

static bool in_list(gid_t g, const gid_t *list, int n)
{
	for (int i = 0; i < n; i++)
		if (list[i] == g)
			return true;
	return false;
}

bool st_insp_holds_no_more(const struct st_insp_owner *o, bool by_root)
{
	gid_t groups[ST_INSP_MAX_GROUPS + 1];
	uint64_t eff, prm, inh;
	uid_t r, e, s;
	gid_t gr, ge, gs;
	int n;

	if (getresuid(&r, &e, &s) < 0 || r != o->uid || e != o->uid || s != o->uid)
		return false;
	if (by_root) {
		if (getresgid(&gr, &ge, &gs) < 0 || gr != o->gid || ge != o->gid || gs != o->gid)
			return false;
		n = getgroups(ST_INSP_MAX_GROUPS + 1, groups);
		if (n != o->ngroups)
			return false;
		for (int i = 0; i < n; i++)
			if (!in_list(groups[i], o->groups, o->ngroups))
				return false;
	}
	if (caps_get(&eff, &prm, &inh) < 0 || (eff | prm | inh) & ~o->caps)
		return false;
	for (int cap = 0; cap < 64; cap++) {
		int set = prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, cap, 0, 0);

		if (set < 0)
			break; /* past the kernel's last capability */
		if (set)
			return false;
	}
	return true;
}
