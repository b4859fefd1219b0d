/* Placeholder: the CTF reader is being written (ctl/reader). */
#ifndef ST_READER_H
#define ST_READER_H
#endif
