/* Placeholder: the CTF reader is being written. */
#include "ctl/reader/reader.h"
