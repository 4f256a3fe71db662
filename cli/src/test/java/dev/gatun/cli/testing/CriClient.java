package dev.gatun.cli.testing;

import dev.gatun.cli.cri.v1.ContainerConfig;
import dev.gatun.cli.cri.v1.ContainerStatus;
import dev.gatun.cli.cri.v1.ContainerStatusRequest;
import dev.gatun.cli.cri.v1.ContainerStatusResponse;
import dev.gatun.cli.cri.v1.CreateContainerRequest;
import dev.gatun.cli.cri.v1.CreateContainerResponse;
import dev.gatun.cli.cri.v1.ListContainersRequest;
import dev.gatun.cli.cri.v1.ListContainersResponse;
import dev.gatun.cli.cri.v1.ListPodSandboxRequest;
import dev.gatun.cli.cri.v1.ListPodSandboxResponse;
import dev.gatun.cli.cri.v1.PodSandbox;
import dev.gatun.cli.cri.v1.PodSandboxConfig;
import dev.gatun.cli.cri.v1.PodSandboxStatus;
import dev.gatun.cli.cri.v1.PodSandboxStatusRequest;
import dev.gatun.cli.cri.v1.PodSandboxStatusResponse;
import dev.gatun.cli.cri.v1.RemoveContainerRequest;
import dev.gatun.cli.cri.v1.RemoveContainerResponse;
import dev.gatun.cli.cri.v1.RemovePodSandboxRequest;
import dev.gatun.cli.cri.v1.RemovePodSandboxResponse;
import dev.gatun.cli.cri.v1.RunPodSandboxRequest;
import dev.gatun.cli.cri.v1.RunPodSandboxResponse;
import dev.gatun.cli.cri.v1.RuntimeServiceGrpc;
import dev.gatun.cli.cri.v1.StartContainerRequest;
import dev.gatun.cli.cri.v1.StartContainerResponse;
import dev.gatun.cli.cri.v1.StopContainerRequest;
import dev.gatun.cli.cri.v1.StopContainerResponse;
import dev.gatun.cli.cri.v1.StopPodSandboxRequest;
import dev.gatun.cli.cri.v1.StopPodSandboxResponse;
import dev.gatun.cli.cri.v1.VersionRequest;
import dev.gatun.cli.cri.v1.VersionResponse;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.ChannelOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A client of a container runtime's CRI (runtime.v1 RuntimeService) on its unix socket, as
 * the kubelet is: the tests drive containerd's CRI plugin with it, which runs the CNI plugin
 * under test for each pod sandbox, so a test sees what Kubernetes would.
 *
 * <p>One method per RPC with the generated messages, and shorter forms for what the tests
 * do. Every call has a deadline ({@link #DEFAULT_DEADLINE}, or {@link #withDeadline}), so a
 * runtime that stops answering fails the test instead of hanging it. Errors come out as
 * gRPC's {@link StatusRuntimeException}, unchanged: for a failed sandbox its description
 * carries the CNI plugin's error message, which the tests assert on.
 */
public final class CriClient implements AutoCloseable {

    /** Long enough for a pod sandbox's first start (pulling the pause image, running CNI). */
    public static final Duration DEFAULT_DEADLINE = Duration.ofMinutes(2);

    private final ManagedChannel channel;
    private final boolean ownsChannel;
    private final Duration deadline;

    private CriClient(ManagedChannel channel, boolean ownsChannel, Duration deadline) {
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        this.deadline = deadline;
    }

    /** A client of the runtime listening on {@code socket}; connects lazily, on the first call. */
    public static CriClient connect(Path socket) {
        return connect(socket, DEFAULT_DEADLINE);
    }

    public static CriClient connect(Path socket, Duration deadline) {
        // grpc-netty-shaded's provider takes unix: targets: a netty builder set up for a domain
        // socket (its epoll transport). One option more: gRPC asks TCP keepalive of every
        // connection, which a unix socket has not, and netty warns of it each time; a null
        // value takes the option off.
        ManagedChannelBuilder<?> builder = Grpc.newChannelBuilder(
                "unix://" + socket.toAbsolutePath(), InsecureChannelCredentials.create());
        if (builder instanceof NettyChannelBuilder netty) {
            netty.withOption(ChannelOption.SO_KEEPALIVE, null);
        }
        ManagedChannel channel = builder.build();
        return new CriClient(channel, true, deadline);
    }

    /**
     * The same connection with another deadline per call; closing the view leaves the
     * connection open (close the client it came from).
     */
    public CriClient withDeadline(Duration perCall) {
        return new CriClient(channel, false, perCall);
    }

    /**
     * Calls Version until the runtime answers (it takes a moment to open its socket after
     * starting), for at most {@code patience}; the last failure if it never does. An
     * interrupt ends the wait as a CANCELLED status (the thread's interrupt flag kept).
     */
    public VersionResponse awaitReady(Duration patience) {
        long end = System.nanoTime() + patience.toNanos();
        while (true) {
            try {
                return withDeadline(Duration.ofSeconds(5)).version();
            } catch (StatusRuntimeException e) {
                Status.Code code = e.getStatus().getCode();
                boolean retry = code == Status.Code.UNAVAILABLE || code == Status.Code.DEADLINE_EXCEEDED
                        || code == Status.Code.UNIMPLEMENTED; // the CRI plugin not registered yet
                if (!retry || System.nanoTime() - end > 0) {
                    throw e;
                }
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw Status.CANCELLED.withDescription("interrupted waiting for the runtime's CRI")
                        .withCause(e).asRuntimeException();
            }
        }
    }

    /** Whether a runtime answers Version on {@code socket} now (within a few seconds). */
    public static boolean ready(Path socket) {
        try (CriClient client = connect(socket, Duration.ofSeconds(5))) {
            client.version();
            return true;
        } catch (StatusRuntimeException e) {
            return false;
        }
    }

    private RuntimeServiceGrpc.RuntimeServiceBlockingStub stub() {
        return RuntimeServiceGrpc.newBlockingStub(channel)
                .withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
    }

    // The RPCs, one each.

    public VersionResponse version(VersionRequest request) {
        return stub().version(request);
    }

    public RunPodSandboxResponse runPodSandbox(RunPodSandboxRequest request) {
        return stub().runPodSandbox(request);
    }

    public StopPodSandboxResponse stopPodSandbox(StopPodSandboxRequest request) {
        return stub().stopPodSandbox(request);
    }

    public RemovePodSandboxResponse removePodSandbox(RemovePodSandboxRequest request) {
        return stub().removePodSandbox(request);
    }

    public PodSandboxStatusResponse podSandboxStatus(PodSandboxStatusRequest request) {
        return stub().podSandboxStatus(request);
    }

    public ListPodSandboxResponse listPodSandbox(ListPodSandboxRequest request) {
        return stub().listPodSandbox(request);
    }

    public CreateContainerResponse createContainer(CreateContainerRequest request) {
        return stub().createContainer(request);
    }

    public StartContainerResponse startContainer(StartContainerRequest request) {
        return stub().startContainer(request);
    }

    public StopContainerResponse stopContainer(StopContainerRequest request) {
        return stub().stopContainer(request);
    }

    public RemoveContainerResponse removeContainer(RemoveContainerRequest request) {
        return stub().removeContainer(request);
    }

    public ContainerStatusResponse containerStatus(ContainerStatusRequest request) {
        return stub().containerStatus(request);
    }

    public ListContainersResponse listContainers(ListContainersRequest request) {
        return stub().listContainers(request);
    }

    // The shorter forms.

    public VersionResponse version() {
        // The version the kubelet sends; containerd answers the same whatever it is.
        return version(VersionRequest.newBuilder().setVersion("v1").build());
    }

    /** Runs a pod sandbox with the default runtime handler: its id. */
    public String runPodSandbox(PodSandboxConfig config) {
        return runPodSandbox(RunPodSandboxRequest.newBuilder().setConfig(config).build()).getPodSandboxId();
    }

    public void stopPodSandbox(String podSandboxId) {
        stopPodSandbox(StopPodSandboxRequest.newBuilder().setPodSandboxId(podSandboxId).build());
    }

    public void removePodSandbox(String podSandboxId) {
        removePodSandbox(RemovePodSandboxRequest.newBuilder().setPodSandboxId(podSandboxId).build());
    }

    public PodSandboxStatus podSandboxStatus(String podSandboxId) {
        return podSandboxStatus(PodSandboxStatusRequest.newBuilder().setPodSandboxId(podSandboxId).build())
                .getStatus();
    }

    /** All the pod sandboxes, unfiltered. */
    public List<PodSandbox> listPodSandbox() {
        return listPodSandbox(ListPodSandboxRequest.getDefaultInstance()).getItemsList();
    }

    /** Creates a container in a pod sandbox (its config as the sandbox was run with): its id. */
    public String createContainer(String podSandboxId, ContainerConfig config, PodSandboxConfig sandbox) {
        return createContainer(CreateContainerRequest.newBuilder()
                .setPodSandboxId(podSandboxId)
                .setConfig(config)
                .setSandboxConfig(sandbox)
                .build()).getContainerId();
    }

    public void startContainer(String containerId) {
        startContainer(StartContainerRequest.newBuilder().setContainerId(containerId).build());
    }

    /** Stops a container: SIGTERM, then SIGKILL after {@code timeoutSeconds}. */
    public void stopContainer(String containerId, long timeoutSeconds) {
        stopContainer(StopContainerRequest.newBuilder()
                .setContainerId(containerId)
                .setTimeout(timeoutSeconds)
                .build());
    }

    public void removeContainer(String containerId) {
        removeContainer(RemoveContainerRequest.newBuilder().setContainerId(containerId).build());
    }

    public ContainerStatus containerStatus(String containerId) {
        return containerStatus(ContainerStatusRequest.newBuilder().setContainerId(containerId).build())
                .getStatus();
    }

    /** All the containers, unfiltered. */
    public List<dev.gatun.cli.cri.v1.Container> listContainers() {
        return listContainers(ListContainersRequest.getDefaultInstance()).getContainersList();
    }

    /** Shuts the connection: lets calls in flight end for a moment, then cuts them. */
    @Override
    public void close() {
        if (!ownsChannel) {
            return;
        }
        channel.shutdown();
        try {
            if (!channel.awaitTermination(2, TimeUnit.SECONDS)) {
                channel.shutdownNow();
                channel.awaitTermination(2, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            channel.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
