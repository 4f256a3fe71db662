package dev.gatun.cli.service;

import dev.gatun.driver.foreign.ForeignDrop;

import java.util.List;

/**
 * The doctor's checks, in the order it made them; {@code usable} when gatun can work here
 * (privileges, both libraries and nf_tables).
 */
public record DoctorReport(List<Check> checks, boolean usable) {

    public DoctorReport {
        checks = List.copyOf(checks);
    }

    /** One line of the report; {@code drop} is set for another firewall's drop, with its own fields. */
    public record Check(String check, boolean ok, String detail, ForeignDrop drop) {
        public Check(String check, boolean ok, String detail) {
            this(check, ok, detail, null);
        }
    }
}
