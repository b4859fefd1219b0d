/*
 * The lock order from Java monitors to native locks (nativehook.c):
 * set up at VMInit, in the callback's thread, and taken down at VMDeath.
 */
#ifndef ST_JVM_NATIVEHOOK_H
#define ST_JVM_NATIVEHOOK_H

#include <jni.h>
#include <jvmti.h>

void st__jvm_nativehook_init(jvmtiEnv *jvmti, JNIEnv *jni);
void st__jvm_nativehook_fini(void);

#endif
