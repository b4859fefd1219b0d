/*
 * A method's bytecode, decoded (bytecode.c).
 */
#ifndef ST_JVM_BYTECODE_H
#define ST_JVM_BYTECODE_H

#include <stdint.h>

#define ST_JVM_MONITORENTER 0xc2

/*
 * The monitorenter instructions of a method's bytecode (code, n bytes):
 * their number (0, 1, ...), and in *first the bytecode index of the
 * first. -1 when the code does not decode (an unknown opcode, an
 * instruction past the end).
 */
int st__jvm_monitorenters(const unsigned char *code, uint32_t n, uint32_t *first);

/*
 * Where a frame blocked at a monitorenter stands, from the location loc
 * JVMTI gives: loc when it is a monitorenter, else the instruction before
 * it when that is one (HotSpot's interpreter stands past the instruction
 * it blocks at), else loc (also when loc is not an instruction of code).
 */
int64_t st__jvm_monitorenter_at(const unsigned char *code, uint32_t n, uint32_t loc);

#endif
