package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** What a command prints: aligned tables and short lines for people, one JSON document with --json. */
final class Output {

    private final PrintWriter out;
    private final boolean json;

    Output(PrintWriter out, boolean json) {
        this.out = out;
        this.json = json;
    }

    boolean json() {
        return json;
    }

    void json(Object document) {
        out.println(Json.text(document));
        out.flush();
    }

    void line(String text) {
        if (!json) {
            out.println(text);
            out.flush();
        }
    }

    /** Prints rows with each column as wide as its widest cell. */
    void table(List<String> header, List<List<String>> rows) {
        List<List<String>> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        int[] width = new int[header.size()];
        for (List<String> r : all) {
            for (int i = 0; i < r.size(); i++) {
                width[i] = Math.max(width[i], r.get(i).length());
            }
        }
        for (List<String> r : all) {
            StringBuilder s = new StringBuilder();
            for (int i = 0; i < r.size(); i++) {
                s.append(i == r.size() - 1 ? r.get(i) : String.format("%-" + (width[i] + 2) + "s", r.get(i)));
            }
            out.println(s.toString().stripTrailing());
        }
        out.flush();
    }
}
