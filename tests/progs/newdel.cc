// The C++ allocation operators, each form once: malloc.test checks each
// event's caller is the line that wrote new or delete, not libstdc++, and
// that a new that throws leaves later events recorded.
#include <cstdio>
#include <new>

struct alignas(64) Wide {
	char c[64];
};

// (seen by something the compiler cannot remove: no new/delete pair elided)
static void *volatile sink;

int main()
{
	int *a = new int(1);                          // new
	int *b = new int[10];                         // new_array
	Wide *w = new Wide;                           // new, aligned
	Wide *ws = new Wide[2];                       // new_array, aligned
	int *n = new (std::nothrow) int;              // new, nothrow
	sink = a, sink = b, sink = w, sink = ws, sink = n;
	delete a;                                     // delete, sized
	delete[] b;                                   // delete_array
	delete w;                                     // delete, sized and aligned
	delete[] ws;                                  // delete_array, aligned
	delete n;                                     // delete of the nothrow one
	try {
		char *big = new char[(size_t)1 << 62];  // throws
		sink = big;
		delete[] big;
	} catch (const std::bad_alloc &) {
		std::puts("bad_alloc");
	}
	int *after = new int(2);                      // new, after the throw
	sink = after;
	delete after;                                 // delete, after the throw
	std::puts("done");
	return 0;
}
