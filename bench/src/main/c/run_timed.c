/*
 * Runs command-line tools the way an engine or a shell already inside the namespace runs them,
 * and times each run. The bench starts it once per tool and case inside the tool's namespace
 * (nsenter --net=NS run_timed), so no run pays for entering the namespace, and the harness's
 * JVM (its process launcher, its pipes) stays outside the measured interval.
 *
 * The tool is looked up on PATH before the clock starts, as Go's exec.LookPath does when dockerd
 * finds iptables. The interval starts just before its process is spawned (posix_spawn: clone
 * with CLONE_VM|CLONE_VFORK, as Go's os/exec does) and ends when it has been reaped;
 * in between the tool's input is written to it and its output read until it closes, as
 * Docker's CombinedOutput does. So it holds the tool's own process and nothing else.
 *
 * Requests on stdin, one per run:
 *   ARGC INPUT_BYTES\n  then ARGC lines, one argument each (none contains a newline),
 *   then INPUT_BYTES bytes given to the tool's stdin, which is then closed.
 * Answer on stdout: "STATUS MICROS OUTPUT_BYTES\n" and then the tool's stdout and stderr
 * together. STATUS is the exit code, 128+N for a signal N, 127 if it could not be started.
 * It exits at the end of its input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void die(const char *what) { perror(what); exit(1); }

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* Appends all of fd's bytes to *out, growing it; returns the new length. */
static size_t drain(int fd, char **out, size_t len, size_t *cap) {
    for (;;) {
        if (len == *cap) {
            *cap = *cap ? *cap * 2 : 4096;
            *out = realloc(*out, *cap);
            if (!*out) die("realloc");
        }
        ssize_t n = read(fd, *out + len, *cap - len);
        if (n == 0) return len;
        if (n < 0) {
            if (errno == EINTR) continue;
            die("read output");
        }
        len += n;
    }
}

/* The executable that PATH names for cmd (cmd itself if it holds a slash or is not found). */
static const char *look_up(const char *cmd, char *found, size_t size) {
    const char *path = getenv("PATH");
    if (strchr(cmd, '/') || !path) return cmd;
    for (const char *dir = path; *dir; ) {
        size_t n = strcspn(dir, ":");
        if (snprintf(found, size, "%.*s/%s", (int) n, n ? dir : ".", cmd) < (int) size && access(found, X_OK) == 0)
            return found;
        dir += n;
        if (*dir == ':') dir++;
    }
    return cmd;
}

static void write_all(int fd, const char *p, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EPIPE) return; /* the tool stopped reading: its status says why */
            die("write input");
        }
        p += w;
        n -= w;
    }
}

int main(void) {
    signal(SIGPIPE, SIG_IGN);
    char *line = NULL, *output = NULL;
    size_t line_cap = 0, output_cap = 0;
    int argc;
    size_t input_len;
    while (getline(&line, &line_cap, stdin) > 0) {
        if (sscanf(line, "%d %zu", &argc, &input_len) != 2 || argc < 1) {
            fprintf(stderr, "run_timed: bad request: %s", line);
            return 2;
        }
        char **argv = calloc(argc + 1, sizeof(char *));
        for (int i = 0; i < argc; i++) {
            ssize_t n = getline(&line, &line_cap, stdin);
            if (n <= 0) die("read argument");
            if (line[n - 1] == '\n') line[n - 1] = 0;
            argv[i] = strdup(line);
        }
        char *input = malloc(input_len + 1);
        if (fread(input, 1, input_len, stdin) != input_len) die("read input");

        int in[2], out[2];
        if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0) die("pipe");
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, in[0], 0);
        posix_spawn_file_actions_adddup2(&actions, out[1], 1);
        posix_spawn_file_actions_adddup2(&actions, out[1], 2);

        char found[4096];
        const char *file = look_up(argv[0], found, sizeof(found));
        pid_t pid;
        long long t0 = now_ns();
        int err = posix_spawn(&pid, file, &actions, NULL, argv, environ);
        close(in[0]);
        close(out[1]);
        size_t output_len = 0;
        int status = 127;
        if (err == 0) {
            write_all(in[1], input, input_len);
            close(in[1]);
            output_len = drain(out[0], &output, 0, &output_cap);
            int ws;
            while (waitpid(pid, &ws, 0) < 0) {
                if (errno != EINTR) die("waitpid");
            }
            status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        } else {
            close(in[1]);
            output_len = drain(out[0], &output, 0, &output_cap);
        }
        long long micros = (now_ns() - t0) / 1000;
        close(out[0]);
        posix_spawn_file_actions_destroy(&actions);

        if (err != 0) {
            char msg[256];
            int n = snprintf(msg, sizeof(msg), "run_timed: cannot start %s: %s\n", argv[0], strerror(err));
            printf("%d %lld %d\n", status, micros, n);
            fwrite(msg, 1, n, stdout);
        } else {
            printf("%d %lld %zu\n", status, micros, output_len);
            fwrite(output, 1, output_len, stdout);
        }
        fflush(stdout);
        for (int i = 0; i < argc; i++) free(argv[i]);
        free(argv);
        free(input);
    }
    return 0;
}
