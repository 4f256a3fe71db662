/*
 * gatun-client: runs a one-shot gatun command, or a CNI plugin call, through the `gatun serve`
 * of its network namespace, so that it costs a round trip on a unix socket instead of a JVM start.
 *
 * The launcher execs it first. It finds the serve with a stat (its one-shot socket is named
 * after the namespace's inode) and sends one call, framed as ServeWire.java describes: a command
 * line ("cli"), or (CNI_COMMAND set, as a container runtime executes a plugin) the CNI_*
 * variables and the config on stdin ("cni"), or (`netavark VERB ...`, as netavark runs gatun's
 * plugin file) the arguments and stdin ("netavark"). It prints what the serve's run printed
 * (stdout, then stderr) and exits with its exit code. Whenever it cannot (no serve, a stale socket, a command that runs where it is
 * typed, anything it does not understand) it falls back before anything ran: it execs the
 * launcher named by GATUN_LAUNCHER again with GATUN_NO_CLIENT=1, which runs the same in a JVM
 * with the same result. Installed by `gatun install` as PREFIX/bin/gatun, it is the gatun
 * command itself: no GATUN_LAUNCHER, and the launcher is PREFIX/lib/gatun/gatun, found from
 * its own path. Run on its own anywhere else, it exits FALLBACK instead. libc only: it must
 * start in about a millisecond.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

/* Not one of gatun's exit codes (0-4): "run it yourself". */
#define FALLBACK 125
/* gatun's exit code for a broken environment. */
#define ENVIRONMENT 4
#define SOCKET_DIR "/run/gatun"
/* Seconds without a byte of the answer after which the client says that it still waits. */
#define NOTICE_SECONDS 10

extern char **environ;

/* The subcommands a serve runs; the others (demo, netns, serve, bench, cni, help) run where typed. */
static const char *const SERVED[] = {"net", "attach", "detach", "publish", "unpublish", "ls", "ruleset", "doctor", NULL};

static int is_served(const char *name) {
    for (const char *const *s = SERVED; *s; s++) {
        if (strcmp(*s, name) == 0) {
            return 1;
        }
    }
    return 0;
}

/* The value of --netns among the global options, "" when absent; NULL when this client cannot parse them. */
static const char *global_options(int argc, char **argv, int *command) {
    const char *netns = "";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--netns") == 0 || strcmp(a, "--driver") == 0) {
            if (i + 1 >= argc) {
                return NULL;
            }
            if (a[2] == 'n') {
                netns = argv[i + 1];
            }
            i++;
        } else if (strncmp(a, "--netns=", 8) == 0) {
            netns = a + 8;
        } else if (strncmp(a, "--driver=", 9) == 0 || strcmp(a, "--json") == 0) {
            continue;
        } else if (a[0] == '-') {
            return NULL; /* --help, --version, a typo: the JVM answers those */
        } else {
            *command = i;
            return netns;
        }
    }
    return NULL;
}

static int write_all(int fd, const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = fd < 3 ? write(fd, buf, len) : send(fd, buf, len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        buf += n;
        len -= (size_t) n;
    }
    return 0;
}

/*
 * What fd gives, NUL-terminated (*len without the NUL), after start bytes left free for the
 * caller: everything until it ends, or with framed only up to the end the answer's first line
 * gives ("STATUS EXIT STDOUT STDERR": the whole answer is there before the serve closes the
 * connection, sometimes milliseconds before). When a read times out (the caller set
 * SO_RCVTIMEO), still_waiting(fd, waiting_on) says so once and the reads wait on without a
 * bound. NULL when out of memory.
 */
static void still_waiting(int fd, const char *socket_path);

static char *read_input(int fd, size_t start, int framed, const char *waiting_on, size_t *len) {
    size_t cap = start + 65536;
    size_t got = start;
    size_t want = 0; /* framed, the answer's whole length once its first line is in, else 0 */
    char *buf = malloc(cap + 1);
    for (;;) {
        if (buf == NULL) {
            return NULL;
        }
        if (framed && want == 0) {
            buf[got] = '\0';
            char *end = strchr(buf, '\n');
            unsigned long long out, err;
            if (end != NULL && sscanf(buf, "%*d %*d %llu %llu", &out, &err) == 2) {
                want = (size_t) (end + 1 - buf) + (size_t) out + (size_t) err;
            }
        }
        if (want != 0 && got >= want) {
            break;
        }
        if (got == cap) {
            cap *= 2;
            char *bigger = realloc(buf, cap + 1);
            if (bigger == NULL) {
                free(buf);
                return NULL;
            }
            buf = bigger;
        }
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && waiting_on != NULL) {
            still_waiting(fd, waiting_on);
            waiting_on = NULL;
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t) n;
    }
    buf[got] = '\0';
    *len = got;
    return buf;
}

/* The launcher of an installed runtime (BIN/../lib/gatun/gatun beside its list "installed"), or NULL. */
static char *installed_launcher(void) {
    static char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        return NULL;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash == NULL) {
        return NULL;
    }
    *slash = '\0';
    static char launcher[PATH_MAX];
    char list[PATH_MAX];
    if (snprintf(launcher, sizeof launcher, "%s/../lib/gatun/gatun", exe) >= (int) sizeof launcher
        || snprintf(list, sizeof list, "%s/../lib/gatun/installed", exe) >= (int) sizeof list
        || access(list, F_OK) != 0) {
        return NULL;
    }
    return launcher;
}

/* Hands the call to the JVM path: nothing ran and nothing was printed. */
static int fall_back(char **argv) {
    const char *launcher = getenv("GATUN_LAUNCHER");
    if (launcher == NULL || launcher[0] == '\0') {
        launcher = installed_launcher();
    }
    if (launcher == NULL) {
        return FALLBACK;
    }
    char *again = strdup(launcher);
    if (again == NULL || unsetenv("GATUN_LAUNCHER") != 0 || setenv("GATUN_NO_CLIENT", "1", 1) != 0) {
        fprintf(stderr, "gatun: out of memory before running %s\n", launcher);
        return ENVIRONMENT;
    }
    argv[0] = again;
    execv(again, argv);
    fprintf(stderr, "gatun: cannot run the launcher %s: %s\n", again, strerror(errno));
    return ENVIRONMENT;
}

/* A connection to the serve of the namespace whose file is ns_path (its socket's path in addr), or -1. */
static int connect_serve(const char *ns_path, struct sockaddr_un *addr) {
    struct stat ns;
    if (stat(ns_path, &ns) != 0) {
        return -1; /* the JVM path says what is wrong with it */
    }
    addr->sun_family = AF_UNIX;
    snprintf(addr->sun_path, sizeof addr->sun_path, SOCKET_DIR "/netns-%llu.calls.sock", (unsigned long long) ns.st_ino);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *) addr, sizeof *addr) != 0) {
        close(fd);
        return -1; /* no serve, or a stale socket of one that died */
    }
    return fd;
}

/*
 * Sends the call, "KIND LENGTH\n" and the body, in one sendmsg: the serve then finds it whole
 * on the connection it accepts and runs it at once. 0, or -1 when the serve went away before
 * it read it all.
 */
static int send_request(int fd, const char *kind, const char *body, size_t len) {
    char head[64];
    int head_len = snprintf(head, sizeof head, "%s %zu\n", kind, len);
    struct iovec parts[2] = {{head, (size_t) head_len}, {(void *) body, len}};
    struct msghdr msg = {0};
    msg.msg_iov = parts;
    msg.msg_iovlen = 2;
    while (msg.msg_iovlen > 0) {
        ssize_t n = sendmsg(fd, &msg, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        /* A large body may go in parts: skip what was sent. */
        while (msg.msg_iovlen > 0 && (size_t) n >= msg.msg_iov->iov_len) {
            n -= (ssize_t) msg.msg_iov->iov_len;
            msg.msg_iov++;
            msg.msg_iovlen--;
        }
        if (msg.msg_iovlen > 0) {
            msg.msg_iov->iov_base = (char *) msg.msg_iov->iov_base + n;
            msg.msg_iov->iov_len -= (size_t) n;
        }
    }
    return 0;
}

enum outcome { RAN, REFUSED, BROKEN };

/*
 * Says, once, that the serve has not answered for NOTICE_SECONDS, and lifts the timeout: a
 * serve that is stopped or stuck would otherwise leave its caller waiting without a word.
 */
static void still_waiting(int fd, const char *socket_path) {
    struct ucred peer;
    socklen_t peer_len = sizeof peer;
    char who[32] = "";
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0) {
        snprintf(who, sizeof who, " (pid %d)", (int) peer.pid);
    }
    fprintf(stderr, "gatun: the serve%s on %s has not answered for %d s; still waiting (its log says what it does; "
                    "if this is interrupted, the call may have run)\n", who, socket_path, NOTICE_SECONDS);
    struct timeval none = {0, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &none, sizeof none);
}

/*
 * Reads the serve's answer. RAN: what the run printed is printed and *code is its exit code.
 * REFUSED: the serve answered that it did not run it (another namespace or driver, a call not
 * for a serve); nothing was printed. BROKEN: the answer stopped or cannot be read, and the
 * call may have run. With socket_path not NULL, a wait of NOTICE_SECONDS is said on stderr.
 */
static enum outcome answer(int fd, const char *socket_path, int *code) {
    if (socket_path != NULL) {
        struct timeval notice = {NOTICE_SECONDS, 0};
        if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &notice, sizeof notice) != 0) {
            socket_path = NULL; /* then it waits without a word, as before */
        }
    }
    size_t len;
    char *reply = read_input(fd, 0, 1, socket_path, &len);
    close(fd);
    char *end = reply == NULL ? NULL : memchr(reply, '\n', len);
    int status = 0;
    int exit_code = 0;
    unsigned long long out = 0, err = 0;
    if (end == NULL || sscanf(reply, "%d %d %llu %llu", &status, &exit_code, &out, &err) != 4) {
        return BROKEN;
    }
    if (status != 200) {
        return REFUSED; /* nothing ran, whatever follows */
    }
    char *content = end + 1;
    size_t got = len - (size_t) (content - reply);
    if (out + err != got) {
        return BROKEN;
    }
    if (write_all(1, content, (size_t) out) != 0 || write_all(2, content + out, (size_t) err) != 0) {
        *code = 1;
    } else {
        *code = exit_code;
    }
    return RAN;
}

/* The words after "netavark" that are the CLI's own, not a call of netavark's. */
static int is_netavark_call(int argc, char **argv, int first) {
    if (strcmp(argv[first], "netavark") != 0 || first + 1 >= argc) {
        return 0;
    }
    const char *verb = argv[first + 1];
    return strcmp(verb, "install") != 0 && strcmp(verb, "help") != 0 && strcmp(verb, "-h") != 0
           && strcmp(verb, "--help") != 0;
}

static int netavark(int argc, char **argv, int first);

/* Whether the command line asks to wait for connections to end (unpublish --drain): no notice then. */
static int drains(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--drain") == 0) {
            return 1;
        }
    }
    return 0;
}

/* A command line: each argument and a NUL byte, a "cli" call to the serve of the namespace it names. */
static int command(int argc, char **argv) {
    int first = 0;
    const char *netns = global_options(argc, argv, &first);
    if (netns != NULL && netns[0] == '\0' && is_netavark_call(argc, argv, first)) {
        return netavark(argc, argv, first);
    }
    if (netns == NULL || !is_served(argv[first])) {
        return fall_back(argv);
    }
    /* The namespace, as the CLI resolves it: a name under /run/netns, a path, or our own. */
    char path[PATH_MAX];
    if (netns[0] == '\0') {
        snprintf(path, sizeof path, "/proc/self/ns/net");
    } else if (strchr(netns, '/') != NULL) {
        if (netns[0] != '/' || strlen(netns) >= sizeof path) {
            return fall_back(argv); /* relative to a directory the serve does not share */
        }
        snprintf(path, sizeof path, "%s", netns);
    } else if (snprintf(path, sizeof path, "/run/netns/%s", netns) >= (int) sizeof path) {
        return fall_back(argv);
    }
    struct sockaddr_un addr;
    int fd = connect_serve(path, &addr);
    if (fd < 0) {
        return fall_back(argv);
    }
    size_t len = 0;
    for (int i = 1; i < argc; i++) {
        len += strlen(argv[i]) + 1;
    }
    char *body = malloc(len + 1);
    if (body == NULL) {
        return fall_back(argv);
    }
    char *p = body;
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(argv[i]) + 1; /* with its NUL: the separator */
        memcpy(p, argv[i], n);
        p += n;
    }
    if (send_request(fd, "cli", body, len) != 0) {
        close(fd);
        return fall_back(argv); /* the serve went away before it read the command */
    }
    free(body);
    int code = 1;
    switch (answer(fd, drains(argc, argv) ? NULL : addr.sun_path, &code)) {
        case RAN:
            return code;
        case REFUSED:
            return fall_back(argv);
        default:
            /* The command may have run: say so rather than run it twice. */
            fprintf(stderr, "gatun: the serve on %s stopped answering while it ran the command, or gave an "
                            "answer this client does not understand; check the result with gatun ls\n", addr.sun_path);
            return 1;
    }
}

/* Puts the config read from stdin back on fd 0 (through a memfd), for the JVM path to read. */
static void restore_stdin(const char *data, size_t len) {
    int fd = memfd_create("gatun-cni-stdin", MFD_CLOEXEC);
    if (fd < 0) {
        return;
    }
    if (write_all(fd, data, len) == 0 && lseek(fd, 0, SEEK_SET) == 0) {
        dup2(fd, 0); /* the copy on 0 loses CLOEXEC: the launcher's JVM reads it */
    }
    close(fd);
}

/*
 * A CNI plugin call (a container runtime executes the link named gatun in its CNI bin
 * directory): a "cni" call to the serve of this process's own namespace. Body: each CNI_*
 * variable as "NAME=VALUE" and a NUL byte, one more NUL, then the config from stdin. Errors
 * are CNI error documents on stdout, as the runtime reads them.
 */
static int cni(char **argv) {
    struct sockaddr_un addr;
    int fd = connect_serve("/proc/self/ns/net", &addr);
    if (fd < 0) {
        return fall_back(argv); /* no serve: stdin is untouched */
    }
    size_t vars = 1;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CNI_", 4) == 0) {
            vars += strlen(*e) + 1;
        }
    }
    size_t len;
    char *body = read_input(0, vars, 0, NULL, &len);
    if (body == NULL) {
        close(fd);
        printf("{\"cniVersion\": \"1.1.0\", \"code\": 11, \"msg\": \"gatun: out of memory reading the config\"}\n");
        return 1;
    }
    char *p = body;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CNI_", 4) == 0) {
            size_t n = strlen(*e) + 1;
            memcpy(p, *e, n);
            p += n;
        }
    }
    *p = '\0';
    if (send_request(fd, "cni", body, len) != 0) {
        close(fd);
        restore_stdin(body + vars, len - vars);
        return fall_back(argv); /* the serve went away before it read the call */
    }
    int code = 1;
    switch (answer(fd, addr.sun_path, &code)) {
        case RAN:
            return code;
        case REFUSED:
            restore_stdin(body + vars, len - vars);
            return fall_back(argv); /* refused before running (a body too large, say): the JVM path runs it */
        default:
            /* It may have run part of the call: say so, as a CNI error the runtime reads. */
            printf("{\"cniVersion\": \"1.1.0\", \"code\": 11, \"msg\": \"the gatun serve on %s stopped answering while "
                   "it ran CNI %s, or gave an answer this client does not understand; try again\"}\n", addr.sun_path,
                   getenv("CNI_COMMAND"));
            return 1;
    }
}

/*
 * A netavark plugin call (netavark runs the plugin file, which runs `gatun netavark VERB
 * [NETNS]`): a "netavark" call to the serve of this process's own namespace. Body: each
 * argument after "netavark" and a NUL byte, one more NUL, then the JSON from stdin (none for
 * info). Errors are netavark's error documents on stdout, as netavark reads them.
 */
static int netavark(int argc, char **argv, int first) {
    struct sockaddr_un addr;
    int fd = connect_serve("/proc/self/ns/net", &addr);
    if (fd < 0) {
        return fall_back(argv); /* no serve: stdin is untouched */
    }
    size_t args = 1;
    for (int i = first + 1; i < argc; i++) {
        args += strlen(argv[i]) + 1;
    }
    int info = strcmp(argv[first + 1], "info") == 0;
    size_t len = args;
    char *body = info ? malloc(args + 1) : read_input(0, args, 0, NULL, &len);
    if (body == NULL) {
        close(fd);
        printf("{\"error\": \"gatun: out of memory reading stdin\"}\n");
        return 1;
    }
    char *p = body;
    for (int i = first + 1; i < argc; i++) {
        size_t n = strlen(argv[i]) + 1;
        memcpy(p, argv[i], n);
        p += n;
    }
    *p = '\0';
    if (send_request(fd, "netavark", body, len) != 0) {
        close(fd);
        restore_stdin(body + args, len - args);
        return fall_back(argv);
    }
    int code = 1;
    switch (answer(fd, addr.sun_path, &code)) {
        case RAN:
            return code;
        case REFUSED:
            restore_stdin(body + args, len - args);
            return fall_back(argv);
        default:
            printf("{\"error\": \"gatun %s: the gatun serve on %s stopped answering while it ran the call, or gave "
                   "an answer this client does not understand; try again\"}\n", argv[first + 1], addr.sun_path);
            return 1;
    }
}

int main(int argc, char **argv) {
    if (getenv("CNI_COMMAND") != NULL) {
        return cni(argv);
    }
    return command(argc, argv);
}
