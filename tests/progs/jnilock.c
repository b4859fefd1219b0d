/*
 * libjnilock.so: the native half of tests/java/Mixed.java, a pthread
 * mutex that Java threads take through JNI, so that one lock-order graph
 * holds a Java monitor and a native lock; and of tests/java/Held.java, a
 * monitor entered with JNI's MonitorEnter that outlives the native call.
 *
 *   Mixed.lockP()         pthread_mutex_lock on the mutex P
 *   Mixed.unlockP()       pthread_mutex_unlock
 *   Mixed.awaitWaiterP()  returns once another thread blocks on P (the
 *                         mutex's word says it has waiters): the holder
 *                         lets it go only then, so the wait is certain
 */
#include <jni.h>
#include <pthread.h>
#include <unistd.h>

#include "blocked.h"

JNIEXPORT void JNICALL Java_Mixed_lockP(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_Mixed_unlockP(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_Mixed_awaitWaiterP(JNIEnv *env, jclass cls);
JNIEXPORT void JNICALL Java_Held_jniEnter(JNIEnv *env, jclass cls, jobject o);
JNIEXPORT void JNICALL Java_Held_jniExit(JNIEnv *env, jclass cls, jobject o);

static pthread_mutex_t p = PTHREAD_MUTEX_INITIALIZER;

JNIEXPORT void JNICALL Java_Mixed_lockP(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	pthread_mutex_lock(&p);
}

JNIEXPORT void JNICALL Java_Mixed_unlockP(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	pthread_mutex_unlock(&p);
}

JNIEXPORT void JNICALL Java_Mixed_awaitWaiterP(JNIEnv *env, jclass cls)
{
	(void)env;
	(void)cls;
	while (!mutex_has_waiter(&p))
		usleep(100);
}

/*   Held.jniEnter(o)      (*env)->MonitorEnter(o), kept after the return
 *   Held.jniExit(o)       (*env)->MonitorExit(o) */
JNIEXPORT void JNICALL Java_Held_jniEnter(JNIEnv *env, jclass cls, jobject o)
{
	(void)cls;
	(*env)->MonitorEnter(env, o);
}

JNIEXPORT void JNICALL Java_Held_jniExit(JNIEnv *env, jclass cls, jobject o)
{
	(void)cls;
	(*env)->MonitorExit(env, o);
}
