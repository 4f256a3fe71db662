/*
 * gatun-client: runs a one-shot gatun command through the `gatun serve` of its network
 * namespace, so that the command costs a round trip on a unix socket instead of a JVM start.
 *
 * The launcher runs it first. It finds the serve with a stat (the socket is named after the
 * namespace's inode), sends the command line to POST /v1/cli, prints what the command printed
 * (stdout, then stderr) and exits with the command's exit code. Whenever it cannot (no serve,
 * a stale socket, a command that runs where it is typed, anything it does not understand) it
 * exits FALLBACK before anything ran, and the launcher runs the command in a JVM instead, with
 * the same result. libc only: it must start in about a millisecond.
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
#include <sys/un.h>
#include <unistd.h>

/* Not one of gatun's exit codes (0-4): "run it yourself". */
#define FALLBACK 125
#define SOCKET_DIR "/run/gatun"

/* The subcommands a serve runs; the others (demo, netns, serve, bench, help) run where typed. */
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

/* The value of a response header, case-insensitively, or -1. */
static long header(const char *head, const char *name) {
    size_t len = strlen(name);
    for (const char *line = strstr(head, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
        if (strncasecmp(line + 2, name, len) == 0 && line[2 + len] == ':') {
            return strtol(line + 3 + len, NULL, 10);
        }
    }
    return -1;
}

/*
 * CNI: a container runtime executes this client (through the link named gatun in its CNI bin
 * directory) with CNI_COMMAND set and the network config on stdin. It sends the CNI_* variables
 * and the config to POST /v1/cni of the serve of its own network namespace, prints the plugin's
 * stdout (and its stderr) and exits with the plugin's code. When no serve answers it returns
 * FALLBACK with stdin as it came (put back in a memfd when it was read already), so the JVM path
 * reads the same config. Body: each variable "NAME=VALUE" and a NUL byte, one more NUL, the config.
 */
extern char **environ;

static void cni_restore_stdin(const char *data, size_t len) {
    int fd = memfd_create("gatun-cni-stdin", MFD_CLOEXEC);
    if (fd < 0) {
        return;
    }
    for (size_t done = 0; done < len;) {
        ssize_t n = write(fd, data + done, len - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            close(fd);
            return;
        }
        done += (size_t) n;
    }
    if (lseek(fd, 0, SEEK_SET) == 0) {
        dup2(fd, 0); /* the copy on 0 loses CLOEXEC: the JVM path reads it */
    }
    close(fd);
}

static int cni(void) {
    struct stat ns;
    if (stat("/proc/self/ns/net", &ns) != 0) {
        return FALLBACK;
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, SOCKET_DIR "/netns-%llu.sock", (unsigned long long) ns.st_ino);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *) &addr, sizeof addr) != 0) {
        return FALLBACK; /* no serve: stdin is untouched */
    }
    size_t vars = 1;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CNI_", 4) == 0) {
            vars += strlen(*e) + 1;
        }
    }
    size_t cap = 65536, body = vars;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            return FALLBACK;
        }
        if (body == cap) {
            cap *= 2;
            buf = realloc(buf, cap);
            continue;
        }
        ssize_t n = read(0, buf + body, cap - body);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        body += (size_t) n;
    }
    char *p = buf;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "CNI_", 4) == 0) {
            size_t n = strlen(*e) + 1;
            memcpy(p, *e, n);
            p += n;
        }
    }
    *p = '\0';
    char head[256];
    int head_len = snprintf(head, sizeof head,
                            "POST /v1/cni HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                            "Content-Length: %zu\r\nConnection: close\r\n\r\n", body);
    if (write_all(fd, head, (size_t) head_len) != 0 || write_all(fd, buf, body) != 0) {
        cni_restore_stdin(buf + vars, body - vars);
        return FALLBACK; /* the serve went away before it read the call */
    }
    size_t rcap = 65536, len = 0;
    char *reply = malloc(rcap + 1);
    for (;;) {
        if (reply == NULL) {
            return FALLBACK;
        }
        ssize_t n = read(fd, reply + len, rcap - len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        len += (size_t) n;
        if (len == rcap) {
            rcap *= 2;
            reply = realloc(reply, rcap + 1);
        }
    }
    close(fd);
    reply[len] = '\0';
    char *end = strstr(reply, "\r\n\r\n");
    int status = 0;
    if (len == 0 || end == NULL || sscanf(reply, "HTTP/1.%*d %d", &status) != 1) {
        /* It may have run part of the call: say so, as a CNI error the runtime reads. */
        printf("{\"cniVersion\": \"1.1.0\", \"code\": 11, \"msg\": \"the gatun serve on %s stopped answering while it "
               "ran CNI %s; try again\"}\n", addr.sun_path, getenv("CNI_COMMAND"));
        return 1;
    }
    if (status != 200) {
        cni_restore_stdin(buf + vars, body - vars);
        return FALLBACK; /* refused before running (a body too large, say): the JVM path runs it */
    }
    *end = '\0';
    long code = header(reply, "Gatun-Exit-Code");
    long out = header(reply, "Gatun-Stdout-Length");
    long total = header(reply, "Content-Length");
    char *content = end + 4;
    size_t got = len - (size_t) (content - reply);
    if (code < 0 || out < 0 || total < out || (size_t) total != got) {
        printf("{\"cniVersion\": \"1.1.0\", \"code\": 11, \"msg\": \"the gatun serve on %s gave an answer this "
               "client does not understand; try again\"}\n", addr.sun_path);
        return 1;
    }
    if (write_all(1, content, (size_t) out) != 0 || write_all(2, content + out, (size_t) (total - out)) != 0) {
        return 1;
    }
    return (int) code;
}

int main(int argc, char **argv) {
    if (getenv("CNI_COMMAND") != NULL) {
        return cni();
    }
    int command = 0;
    const char *netns = global_options(argc, argv, &command);
    if (netns == NULL || !is_served(argv[command])) {
        return FALLBACK;
    }
    /* The namespace, as the CLI resolves it: a name under /run/netns, a path, or our own. */
    char path[PATH_MAX];
    if (netns[0] == '\0') {
        snprintf(path, sizeof path, "/proc/self/ns/net");
    } else if (strchr(netns, '/') != NULL) {
        if (netns[0] != '/' || strlen(netns) >= sizeof path) {
            return FALLBACK; /* relative to a directory the serve does not share */
        }
        snprintf(path, sizeof path, "%s", netns);
    } else if (snprintf(path, sizeof path, "/run/netns/%s", netns) >= (int) sizeof path) {
        return FALLBACK;
    }
    struct stat ns;
    if (stat(path, &ns) != 0) {
        return FALLBACK; /* the JVM path says what is wrong with it */
    }
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, SOCKET_DIR "/netns-%llu.sock", (unsigned long long) ns.st_ino);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *) &addr, sizeof addr) != 0) {
        return FALLBACK; /* no serve, or a stale socket of one that died */
    }

    size_t body = 0;
    for (int i = 1; i < argc; i++) {
        body += strlen(argv[i]) + 1;
    }
    char head[256];
    int head_len = snprintf(head, sizeof head,
                            "POST /v1/cli HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/octet-stream\r\n"
                            "Content-Length: %zu\r\nConnection: close\r\n\r\n", body);
    char *request = malloc((size_t) head_len + body);
    if (request == NULL) {
        return FALLBACK;
    }
    memcpy(request, head, (size_t) head_len);
    char *p = request + head_len;
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(argv[i]) + 1; /* with its NUL: the separator */
        memcpy(p, argv[i], n);
        p += n;
    }
    if (write_all(fd, request, (size_t) head_len + body) != 0) {
        return FALLBACK; /* the serve went away before it read the command */
    }
    free(request);

    size_t cap = 65536, len = 0;
    char *reply = malloc(cap + 1);
    for (;;) {
        if (reply == NULL) {
            fprintf(stderr, "gatun: out of memory reading the answer of the serve on %s\n", addr.sun_path);
            return 1;
        }
        ssize_t n = read(fd, reply + len, cap - len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        len += (size_t) n;
        if (len == cap) {
            cap *= 2;
            reply = realloc(reply, cap + 1);
        }
    }
    close(fd);
    reply[len] = '\0';

    char *end = strstr(reply, "\r\n\r\n");
    int status = 0;
    if (len == 0 || end == NULL || sscanf(reply, "HTTP/1.%*d %d", &status) != 1) {
        /* The command may have run: say so rather than run it twice. */
        fprintf(stderr, "gatun: the serve on %s stopped answering while it ran the command; "
                        "check the result with gatun ls\n", addr.sun_path);
        return 1;
    }
    if (status != 200) {
        return FALLBACK; /* refused before running: another namespace or driver, or not for a serve */
    }
    *end = '\0';
    long code = header(reply, "Gatun-Exit-Code");
    long out = header(reply, "Gatun-Stdout-Length");
    long total = header(reply, "Content-Length");
    char *content = end + 4;
    size_t got = len - (size_t) (content - reply);
    if (code < 0 || out < 0 || total < out || (size_t) total != got) {
        fprintf(stderr, "gatun: the serve on %s gave an answer this client does not understand\n", addr.sun_path);
        return 1;
    }
    if (write_all(1, content, (size_t) out) != 0 || write_all(2, content + out, (size_t) (total - out)) != 0) {
        return 1;
    }
    return (int) code;
}
