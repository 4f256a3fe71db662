/*
 * Times gatun commands sent to a serve by the C client's own code, without its process start:
 * what a user's `gatun publish` costs once the client runs. The client's source is compiled into
 * this program (its main renamed), so each request is connected, framed, sent and read by exactly
 * the functions the installed gatun command runs; nothing of a JIT or a collector of the bench's
 * JVM is inside a sample, and the reading stops where the client's does (at the answer's
 * Content-Length, not the connection's close).
 *
 * It speaks run_timed's protocol (requests on stdin, one per run: "ARGC INPUT_BYTES\n" and ARGC
 * lines, the arguments after the program name, e.g. --netns NS publish ...; INPUT_BYTES must be
 * 0), and answers "STATUS MICROS OUTPUT_BYTES\n" and then what the serve's run printed (stdout,
 * then stderr). STATUS is the command's exit code, or the client's FALLBACK (125) when no serve
 * took it: this program never starts a JVM. The interval holds the client's command() and
 * nothing else: from finding the serve's socket to the last byte of its answer.
 */
#define main gatun_client_main
#include "gatun-client.c"
#undef main

#include <fcntl.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

int main(void) {
    /* Without a launcher the client falls back by returning FALLBACK instead of running a JVM. */
    unsetenv("GATUN_LAUNCHER");
    /* The answers go to the real stdout; the client writes the runs' output to fds 1 and 2, a file read after each run. */
    FILE *answers = fdopen(dup(1), "w");
    int printed = memfd_create("serve-timed-output", MFD_CLOEXEC);
    if (answers == NULL || printed < 0 || dup2(printed, 1) < 0 || dup2(printed, 2) < 0) {
        die("serve_timed: redirect");
    }
    char *line = NULL;
    size_t line_cap = 0;
    int argc;
    size_t input_len;
    while (getline(&line, &line_cap, stdin) > 0) {
        if (sscanf(line, "%d %zu", &argc, &input_len) != 2 || argc < 1 || input_len != 0) {
            fprintf(answers, "serve_timed: bad request: %s", line);
            return 2;
        }
        char **argv = calloc((size_t) argc + 2, sizeof(char *));
        if (argv == NULL) {
            die("serve_timed: calloc");
        }
        argv[0] = "gatun";
        for (int i = 1; i <= argc; i++) {
            ssize_t n = getline(&line, &line_cap, stdin);
            if (n <= 0) {
                die("serve_timed: read argument");
            }
            if (line[n - 1] == '\n') {
                line[n - 1] = '\0';
            }
            argv[i] = strdup(line);
        }
        if (ftruncate(printed, 0) != 0 || lseek(printed, 0, SEEK_SET) != 0) {
            die("serve_timed: reset output");
        }
        long long start = now_ns();
        int status = command(argc + 1, argv);
        long long micros = (now_ns() - start) / 1000;

        if (status == FALLBACK && lseek(printed, 0, SEEK_CUR) == 0) {
            dprintf(printed, "serve_timed: no serve took the command (the gatun command would have started a JVM)\n");
        }
        off_t size = lseek(printed, 0, SEEK_CUR);
        char *output = malloc((size_t) size + 1);
        if (output == NULL || pread(printed, output, (size_t) size, 0) != size) {
            die("serve_timed: read output");
        }
        fprintf(answers, "%d %lld %lld\n", status, micros, (long long) size);
        fwrite(output, 1, (size_t) size, answers);
        fflush(answers);
        free(output);
        for (int i = 1; i <= argc; i++) {
            free(argv[i]);
        }
        free(argv);
    }
    return 0;
}
