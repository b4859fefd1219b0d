# What tests/progs/allocs must leave in a trace of the malloc family
# (sourced after lib.sh): malloc.test's expectations, which
# allocators.test holds to as well when another allocator serves the
# calls behind our wrappers.

# allocs_events EVENTS [--no-pvalloc]: EVENTS holds the malloc events of
# one run of allocs, as babeltrace2 prints them from "malloc:" on; the
# option is the one allocs was given (no pvalloc call).
allocs_events() {
	ev=$1
	# one EVENT FIELDS: exactly one EVENT event with these fields
	one() {
		assert_eq "$1 { $2 }" 1 "$(grep "^malloc:$1: " "$ev" | grep -c -- "$2" || true)"
	}
	one malloc 'size = 1001, ptr = 0x[1-9A-F]'
	one calloc 'nmemb = 7, size = 1003, ptr = 0x[1-9A-F]'
	one realloc 'old = 0x0, size = 1005, ptr = 0x[1-9A-F]'
	one realloc 'old = 0x[1-9A-F][0-9A-F]*, size = 100007, ptr = 0x[1-9A-F]'
	one reallocarray 'old = 0x0, nmemb = 3, size = 1009, ptr = 0x[1-9A-F]'
	one posix_memalign 'align = 256, size = 1011, ptr = 0x[0-9A-F]*00, result = 0,'
	one posix_memalign 'align = 3, size = 1013, ptr = 0x0, result = 22,'
	one aligned_alloc 'align = 64, size = 1017, ptr = 0x[1-9A-F]'
	one memalign 'align = 512, size = 1019, ptr = 0x[1-9A-F]'
	one valloc 'size = 1021, ptr = 0x[0-9A-F]*000,'
	if [ "${2-}" = --no-pvalloc ]; then
		assert_eq "pvalloc events" 0 "$(grep -c '^malloc:pvalloc: ' "$ev" || true)"
	else
		one pvalloc 'size = 1023, ptr = 0x[0-9A-F]*000,'
	fi
	one malloc 'size = 9223372036854775807, ptr = 0x0,'
	one free 'ptr = 0x0 }'
	one mmap 'length = 196608, prot = 3, flags = 34, fd = -1, offset = 0, ptr = 0x[1-9A-F]'
	one mmap 'length = 4096, prot = 1, flags = 2, fd = 12345, offset = 0, ptr = 0xFFFFFFFFFFFFFFFF, err = 9 }'
	one mremap 'old_size = 196608, new_size = 327680, flags = 1, ptr = 0x[1-9A-F]'
	one munmap 'length = 327680, result = 0, err = 0 }'
	one mremap 'old_size = 65536, new_size = 65536, flags = 3, ptr = 0x[1-9A-F]'
	one mmap 'length = 131072, prot = 3, flags = 34, fd = -1, offset = 0, ptr = 0x[1-9A-F]'
	one munmap 'length = 131072, result = 0, err = 0 }'

	# the realloc grows the block realloc(NULL) made; the fixed mremap moved
	# to the PROT_NONE mapping; what munmap unmaps is what mremap made
	field() { sed "s/.* $1 = \\([0-9A-Fx-]*\\)[,} ].*/\\1/"; }
	first=$(grep '^malloc:realloc: .*old = 0x0, size = 1005' "$ev" | field ptr)
	assert_eq "realloc of the block realloc(NULL) made" "$first" \
		"$(grep '^malloc:realloc: .*size = 100007' "$ev" | field old)"
	assert_eq "fixed mremap: to the address given" \
		"$(grep '^malloc:mmap: .*length = 65536, prot = 0,' "$ev" | field ptr)" \
		"$(grep '^malloc:mremap: .*flags = 3,' "$ev" | field ptr)"
	assert_eq "munmap of what mremap made" \
		"$(grep '^malloc:mremap: .*new_size = 327680' "$ev" | field ptr)" \
		"$(grep '^malloc:munmap: .*length = 327680' "$ev" | field addr)"

	# every block of the program (its sizes) is freed by a free of its
	# pointer after it (pointers are reused: counted in order)
	left=$(awk '
		/^malloc:(malloc|calloc|realloc|reallocarray|posix_memalign|aligned_alloc|memalign|valloc|pvalloc): .*size = 10[0-9][0-9][,} ]/ ||
		/^malloc:realloc: .*size = 100007,/ {
			match($0, /ptr = 0x[0-9A-F]*/); p = substr($0, RSTART + 6, RLENGTH - 6)
			if (p != "0x0") { held[p]++; n++ }
			if ($0 ~ /^malloc:realloc: / && match($0, /old = 0x[0-9A-F]*/)) {
				o = substr($0, RSTART + 6, RLENGTH - 6); if (held[o]) { held[o]--; n-- }
			}
		}
		/^malloc:free: / {
			match($0, /ptr = 0x[0-9A-F]*/); p = substr($0, RSTART + 6, RLENGTH - 6)
			if (held[p]) { held[p]--; n-- }
		}
		END { print n + 0 }' "$ev")
	assert_eq "blocks of the program not freed" 0 "$left"
}
