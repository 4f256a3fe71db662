package dev.gatun.cli.host;

import java.nio.file.Path;

/** The text of gatun.service: one serve for the host's network namespace, supervised by systemd. */
public final class ServiceUnit {

    public static final String NAME = "gatun.service";

    private ServiceUnit() {
    }

    /**
     * The unit for the launcher at {@code launcher}. Type=notify: the serve sends READY=1 once its
     * first read of the kernel is done and its API answers, so docker.service and
     * containerd.service, ordered after it, start against a serve that is there. The serve needs
     * CAP_NET_ADMIN (netlink), CAP_NET_RAW (iptables next to other firewalls), CAP_SYS_ADMIN
     * (entering a container's namespace) and CAP_SYS_PTRACE (reading another process's namespace
     * and sockets); the bounding set is exactly those. /proc/sys stays writable: gatun turns on
     * forwarding and route_localnet per bridge. The JIT needs writable, executable memory, so
     * MemoryDenyWriteExecute is not set.
     */
    public static String text(Path launcher) {
        return """
                # gatun's service unit, made by gatun install; gatun uninstall removes it.
                [Unit]
                Description=gatun: container port publishing on nftables (the serve of the host's network namespace)
                Documentation=man:nft(8)
                After=network-pre.target nftables.service firewalld.service
                Before=docker.service containerd.service podman.service network-online.target

                [Service]
                Type=notify
                NotifyAccess=main
                ExecStart=%s serve
                Restart=on-failure
                RestartSec=1s
                TimeoutStartSec=90s
                TimeoutStopSec=10s
                CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW CAP_SYS_ADMIN CAP_SYS_PTRACE
                NoNewPrivileges=yes
                ProtectSystem=full
                ProtectHome=read-only
                PrivateTmp=yes
                ProtectKernelModules=yes
                ProtectControlGroups=yes
                ProtectClock=yes
                RestrictAddressFamilies=AF_UNIX AF_NETLINK AF_INET AF_INET6
                RestrictNamespaces=net mnt
                RestrictRealtime=yes
                RestrictSUIDSGID=yes
                LockPersonality=yes
                SystemCallArchitectures=native

                [Install]
                WantedBy=multi-user.target
                """.formatted(launcher);
    }
}
