/* gatun entry header: the libc calls gatun makes itself (sockets, namespaces, mounts, errno). */
#ifndef GATUN_LIBC_H
#define GATUN_LIBC_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <net/if.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <linux/limits.h>
#include <linux/nsfs.h>
#include <linux/capability.h>
#endif
