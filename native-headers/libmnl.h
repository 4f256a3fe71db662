/* gatun entry header: libmnl, the minimal netlink library gatun's sockets are built on. */
#ifndef GATUN_LIBMNL_H
#define GATUN_LIBMNL_H
#include <libmnl/libmnl.h>
#endif
