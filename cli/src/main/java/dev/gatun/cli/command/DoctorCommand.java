package dev.gatun.cli.command;

import dev.gatun.cli.json.Json;
import dev.gatun.cli.service.ExitCode;
import dev.gatun.cli.service.DoctorReport;
import picocli.CommandLine.Command;

import java.util.List;

/** Checks what gatun needs on this host and what could get in its way. */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = "Check privileges, libraries, nf_tables, a serve, iptables variants, other firewalls and gatun bridges.",
        footer = {"", "Exit code 0 when gatun can work here, 4 when something it needs is missing.",
                "", "Examples:", "  gatun doctor", "  gatun --json doctor"})
final class DoctorCommand extends Base {

    @Override
    public Integer call() {
        DoctorReport report = service().doctor();
        Output o = out();
        if (o.json()) {
            o.json(Json.doctor(report));
        } else {
            o.table(List.of("CHECK", "OK", "DETAIL"), report.checks().stream()
                    .map(c -> List.of(c.check(), c.ok() ? "ok" : "NO", c.detail())).toList());
        }
        return report.usable() ? ExitCode.OK : ExitCode.ENVIRONMENT;
    }
}
