package dev.gatun.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs command-line tools inside one namespace the way their users do, from a process already
 * there: one run_timed (bench/src/main/c) started once in the namespace, which spawns each tool
 * directly and times it from spawn to reaping. Entering the namespace (an nsenter per call) and
 * this JVM's process launcher would otherwise be inside every sample, costs Docker never pays.
 * serve_timed speaks the same protocol: it times the C client's sending of a command to a serve.
 */
final class InNamespace implements AutoCloseable {

    /** One tool run: its exit status, its wall time as run_timed measured it, its stdout and stderr. */
    record Run(int status, long micros, String output) {}

    private final String where;
    private final Process timer;
    private final InputStream answers;
    private final OutputStream requests;

    /** Starts run_timed ({@code timer}) in the namespace at {@code nsPath}. */
    InNamespace(Path timer, Path nsPath) {
        this.where = nsPath.toString();
        List<String> cmd = List.of("nsenter", "--net=" + nsPath, timer.toString());
        try {
            this.timer = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        } catch (IOException e) {
            throw new IllegalStateException("cannot start " + String.join(" ", cmd) + ": " + e.getMessage(), e);
        }
        answers = new BufferedInputStream(this.timer.getInputStream());
        requests = this.timer.getOutputStream();
    }

    /** Runs {@code argv} with {@code input} (or nothing) on its stdin. */
    Run run(List<String> argv, String input) {
        byte[] in = input == null ? new byte[0] : input.getBytes(StandardCharsets.UTF_8);
        StringBuilder request = new StringBuilder().append(argv.size()).append(' ').append(in.length).append('\n');
        for (String arg : argv) {
            if (arg.indexOf('\n') >= 0) {
                throw new IllegalArgumentException("an argument with a newline: " + arg);
            }
            request.append(arg).append('\n');
        }
        try {
            requests.write(request.toString().getBytes(StandardCharsets.UTF_8));
            requests.write(in);
            requests.flush();
            String[] head = readLine().split(" ");
            byte[] output = answers.readNBytes(Integer.parseInt(head[2]));
            return new Run(Integer.parseInt(head[0]), Long.parseLong(head[1]), new String(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new IllegalStateException("run_timed in " + where + " stopped (its errors are above)", e);
        }
    }

    /** Runs {@code argv}; its microseconds. Fails if it fails. */
    long time(List<String> argv, String input) {
        Run r = run(argv, input);
        if (r.status() != 0) {
            String shown = String.join(" ", argv.subList(0, Math.min(argv.size(), 8)));
            throw new IllegalStateException(shown + " ... exited " + r.status() + ": " + r.output().strip());
        }
        return r.micros();
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b; (b = answers.read()) != '\n'; ) {
            if (b < 0) {
                throw new IOException("end of run_timed's answers");
            }
            line.write(b);
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        try {
            requests.close();
            if (!timer.waitFor(10, TimeUnit.SECONDS)) {
                timer.destroyForcibly();
            }
        } catch (IOException e) {
            timer.destroyForcibly();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            timer.destroyForcibly();
        }
    }
}
