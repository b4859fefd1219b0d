/*
 * A Java thread that owns monitors and blocks on a native lock (a pthread
 * mutex its JNI code takes): through the wrappers' lock wait hook
 * (st_lock_wait_hook, <shimtrace/tracepoint.h>) the monitors it owns are
 * written as jvm:monitor_held just before the wrapper's wait event, so
 * that the lock order of the trace runs from monitors to native locks
 * too. (From native locks to monitors needs nothing: a thread holding a
 * mutex that contends on a monitor has it in its held set.)
 *
 * The wrappers call the hook from every thread, and HotSpot's own locks
 * are pthread mutexes: a JVMTI call is only legal from a Java thread
 * running native code (from inside the VM it would corrupt the thread's
 * state, and a VM thread holding the VM's locks could deadlock). So the
 * hook acts only when
 *   - the lock's caller is not in libjvm.so (HotSpot's own locks: its
 *     compiler threads take them in the native state too);
 *   - the thread is a Java thread: JNI's GetEnv, a read of the VM's
 *     thread-local, with no state transition and no lock;
 *   - and the thread's state is "in native", read in its JavaThread as
 *     the serviceability agent reads it: HotSpot exports the offsets of
 *     its fields (gHotSpotVMStructs: _thread_state, _stack_base,
 *     _stack_size). The JNIEnv's place in the JavaThread is not among
 *     them; it is found at VMInit, in a thread known to run native code
 *     (the callback's), as the one offset at which that thread's stack
 *     bounds and state read right. Anything not found, or found twice:
 *     no hook, said once, and no monitor-to-native edges.
 * A thread already in the hook (the JVMTI calls may take locks) is let
 * through; errno is kept.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/atomic.h"
#include "jvm/agent.h"
#include "jvm/monitors.h"
#include "jvm/nativehook.h"

/* HotSpot's JavaThreadState: stable from JDK 8 to 25. */
#define THREAD_IN_NATIVE 4
/* How far the JNIEnv may be from the start of its JavaThread. */
#define ENV_OFFSET_MAX 4096

static JavaVM *vm;
static jvmtiEnv *env_jvmti;
static long env_offset = -1, state_offset = -1, base_offset = -1, size_offset = -1;
static uintptr_t jvm_lo, jvm_hi; /* libjvm.so's mapped range */

static __thread __attribute__((tls_model("global-dynamic"))) int in_hook;

/* The offsets of JavaThread's fields from the VM's exported table. */
static bool vmstructs(void)
{
	void *jvm = dlopen("libjvm.so", RTLD_NOLOAD | RTLD_LAZY);
	char **table;
	uint64_t *type_at, *field_at, *offset_at, *stride;

	if (!jvm)
		return false;
	table = dlsym(jvm, "gHotSpotVMStructs");
	type_at = dlsym(jvm, "gHotSpotVMStructEntryTypeNameOffset");
	field_at = dlsym(jvm, "gHotSpotVMStructEntryFieldNameOffset");
	offset_at = dlsym(jvm, "gHotSpotVMStructEntryOffsetOffset");
	stride = dlsym(jvm, "gHotSpotVMStructEntryArrayStride");
	dlclose(jvm);
	if (!table || !*table || !type_at || !field_at || !offset_at || !stride || !*stride)
		return false;
	for (char *e = *table;; e += *stride) {
		const char *type = *(const char **)(e + *type_at);
		const char *field = *(const char **)(e + *field_at);
		long off = (long)*(uint64_t *)(e + *offset_at);

		if (!type)
			break;
		if (!field || strcmp(type, "JavaThread") != 0)
			continue;
		if (strcmp(field, "_thread_state") == 0)
			state_offset = off;
		else if (strcmp(field, "_stack_base") == 0)
			base_offset = off;
		else if (strcmp(field, "_stack_size") == 0)
			size_offset = off;
	}
	return state_offset >= 0 && base_offset >= 0 && size_offset >= 0;
}

/* Reads n bytes at p, which may not be mapped (false then). */
static bool peek(const void *p, void *out, size_t n)
{
	struct iovec local = { out, n }, remote = { (void *)p, n };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)n;
}

/* The JNIEnv's offset in its JavaThread, from env, the JNIEnv of this
 * thread, which runs native code (a JVMTI callback): the one offset at
 * which the stack base and size bracket this frame and the state says
 * native. (Once, at VMInit: the candidates below the JavaThread are read
 * without trusting them to be mapped.) */
static long env_offset_of(JNIEnv *env)
{
	uintptr_t here = (uintptr_t)__builtin_frame_address(0);
	long found = -1;

	for (long off = 8; off <= ENV_OFFSET_MAX; off += 8) {
		const char *thread = (const char *)env - off;
		uintptr_t base;
		size_t size;
		int state;

		if (!peek(thread + state_offset, &state, sizeof(state)) || state != THREAD_IN_NATIVE ||
		    !peek(thread + base_offset, &base, sizeof(base)) ||
		    !peek(thread + size_offset, &size, sizeof(size)))
			continue;
		if (base <= here || size > base || base - size >= here)
			continue;
		if (found >= 0)
			return -1; /* (two: not sure) */
		found = off;
	}
	return found;
}

static int find_jvm(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *slash = strrchr(info->dlpi_name, '/');

	(void)size;
	(void)arg;
	if (strcmp(slash ? slash + 1 : info->dlpi_name, "libjvm.so") != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD)
			continue;
		if (!jvm_lo || lo < jvm_lo)
			jvm_lo = lo;
		if (hi > jvm_hi)
			jvm_hi = hi;
	}
	return 1;
}

static void hook(const void *site)
{
	uint32_t mask = st_jvm_mask(monitor_held);
	JNIEnv *jni = NULL;
	int state, saved;

	if (!mask || in_hook || st__jvm_dead() ||
	    ((uintptr_t)site >= jvm_lo && (uintptr_t)site < jvm_hi))
		return;
	saved = errno;
	in_hook = 1;
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) == JNI_OK && jni) {
		memcpy(&state, (char *)jni - env_offset + state_offset, sizeof(state));
		if (state == THREAD_IN_NATIVE)
			st__jvm_held(env_jvmti, jni, mask, NULL, 0);
	}
	in_hook = 0;
	errno = saved;
}

void st__jvm_nativehook_init(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (!st__jvm_can_held || (*jni)->GetJavaVM(jni, &vm) != JNI_OK)
		return;
	if (!vmstructs() || (env_offset = env_offset_of(jni)) < 0 ||
	    !dl_iterate_phdr(find_jvm, NULL) || !jvm_lo) {
		fprintf(stderr, "shimtrace: the JVM agent cannot tell a Java thread in native code "
				"here: no lock order from Java monitors to native locks\n");
		return;
	}
	env_jvmti = jvmti;
	st_store_release(&st_lock_wait_hook, hook);
}

void st__jvm_nativehook_fini(void)
{
	/* (compared first: another runtime's hook is not ours to clear) */
	void (*mine)(const void *) = hook;

	__atomic_compare_exchange_n(&st_lock_wait_hook, &mine, NULL, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}
