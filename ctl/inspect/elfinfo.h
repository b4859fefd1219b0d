/*
 * What an inspector reads from an object file's ELF headers (elfinfo.c):
 * its load extent, build-id and debug link, and its dynamic symbols.
 */
#ifndef ST_INSPECT_ELFINFO_H
#define ST_INSPECT_ELFINFO_H

#include <stdbool.h>
#include <stdint.h>

#include "ctl/inspect/proto.h"

/* ELF facts of an object file, cached by file identity. */
struct st_insp_facts {
	bool is_pic;
	uint64_t lowest, lowest_off0, end; /* PT_LOAD extent */
	uint8_t build_id[ST_INSP_BUILD_ID_MAX];
	uint32_t build_id_len;
	char *debug_link;
	uint32_t crc;
};

/* The facts of the ELF file fd, from a cache keyed by the file's identity
 * (the caller does not free them), or NULL when it is not a regular ELF
 * file. */
const struct st_insp_facts *st_insp_facts(int fd);

/* The value of a defined dynamic function symbol of the ELF file fd, or 0. */
uint64_t st_insp_elf_symbol(int fd, const char *name);

#endif /* ST_INSPECT_ELFINFO_H */
