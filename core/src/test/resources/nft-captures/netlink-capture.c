/*
 * LD_PRELOAD shim used only to record test data: writes every buffer that a program sends
 * on a netlink socket, as one line of hex per send call, to the file named by
 * $GATUN_CAPTURE. It forwards the call unchanged. See capture.sh.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>

static int is_netlink(int fd) {
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);
    return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 && ss.ss_family == AF_NETLINK;
}

static void record(const struct iovec *iov, size_t n) {
    const char *path = getenv("GATUN_CAPTURE");
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    for (size_t i = 0; i < n; i++) {
        const unsigned char *p = iov[i].iov_base;
        for (size_t j = 0; j < iov[i].iov_len; j++) fprintf(f, "%02x", p[j]);
    }
    fputc('\n', f);
    fclose(f);
}

ssize_t sendmsg(int fd, const struct msghdr *msg, int flags) {
    static ssize_t (*real)(int, const struct msghdr *, int);
    if (!real) real = dlsym(RTLD_NEXT, "sendmsg");
    if (is_netlink(fd)) record(msg->msg_iov, msg->msg_iovlen);
    return real(fd, msg, flags);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to, socklen_t tolen) {
    static ssize_t (*real)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
    if (!real) real = dlsym(RTLD_NEXT, "sendto");
    if (is_netlink(fd)) {
        struct iovec iov = { (void *)buf, len };
        record(&iov, 1);
    }
    return real(fd, buf, len, flags, to, tolen);
}
