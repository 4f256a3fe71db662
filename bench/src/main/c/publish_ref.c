/*
 * The C floor for one publish: sends exactly the netlink messages that gatun's nftables driver
 * sends to publish one mapping "tcp HOST_PORT -> ADDR:PORT" on every host address, and waits
 * for the same replies:
 *   1. a non-blocking read of a socket subscribed to rtnetlink's link and address groups; only
 *      when it shows a change (or at the first publish), an RTM_GETADDR dump (the host's
 *      addresses, for the address-bound overlap check and the next step), as gatun's cache does
 *   2. in one datagram: NFT_MSG_GETGEN (the generation the commit is guarded with), then
 *      NFT_MSG_GETSETELEM on ports4 for the key (is the port held?) and on hostip4 for each
 *      local IPv4 address (is it held on one address?), none asking for an ACK
 *   3. the key being new, in one datagram, a SOCK_DIAG_BY_FAMILY lookup (exact, not a dump) of
 *      the TCP socket that would take a connection to the host port on 0.0.0.0 and on each local
 *      IPv4 address: is the port held by a socket of the host? (it is not here: the publish goes on)
 *   4. a batch: BEGIN with NFNL_BATCH_GENID, NEWSETELEM on ports4 with the owner comment, END
 * bench's SameMessagesTest holds it to that: it compares the datagrams of a warm publish with
 * gatun's byte for byte, but for sequence numbers, port ids and the generation id.
 * Built by the bench harness with gcc against libnftnl and libmnl; run inside the namespace.
 *
 * usage: publish_ref HOST_PORT CONTAINER_IP CONTAINER_PORT OWNER [COUNT]
 * prints the microseconds of each of COUNT publishes (ports HOST_PORT, HOST_PORT+1, ...).
 * With COUNT 0 it stays up and reads lines "PORT [N]" on stdin: it publishes host ports PORT
 * to PORT+N-1 (N = 1 if absent) in a row, each to the same container port, and answers each
 * with the microseconds it took on a line of its own: a warm process, like gatun's
 * in-process driver. A line "bulk FIRST N" instead sends N new mappings in one batch (see bulk)
 * and answers with the microseconds of the whole batch; "commit FIRST [N]" makes N publishes of
 * their commit alone (see commit_only), the limit of a publish planned from memory; "heard FIRST
 * [N]" the same while a thread of this program listens to the namespace's nftables notifications
 * and decodes them (see listen_thread), as a driver that follows the ruleset does.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include <netinet/tcp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <libmnl/libmnl.h>
#include <libnftnl/common.h>
#include <libnftnl/gen.h>
#include <libnftnl/set.h>
#include <libnftnl/udata.h>

#define MAX_ADDRS 64
static char buf[1 << 16];
static uint32_t seq;
static uint32_t addrs[MAX_ADDRS];
static int naddrs;

static void die(const char *what) { perror(what); exit(1); }

/* Reads replies until the ACK (or error) for seq; hands other messages to cb. */
static int talk(struct mnl_socket *nl, mnl_cb_t cb, void *data, uint32_t expect) {
    unsigned int portid = mnl_socket_get_portid(nl);
    for (;;) {
        int n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
        if (n < 0) die("recv");
        int r = mnl_cb_run(buf, n, expect, portid, cb, data);
        if (r <= MNL_CB_STOP) return r;
    }
}

static int addr_cb(const struct nlmsghdr *nlh, void *data) {
    struct ifaddrmsg *ifa = mnl_nlmsg_get_payload(nlh);
    struct nlattr *a;
    if (ifa->ifa_family != AF_INET) return MNL_CB_OK;
    mnl_attr_for_each(a, nlh, sizeof(*ifa)) {
        if (mnl_attr_get_type(a) == IFA_LOCAL && naddrs < MAX_ADDRS) addrs[naddrs++] = mnl_attr_get_u32(a);
    }
    return MNL_CB_OK;
}

static void dump_addresses(struct mnl_socket *rt) {
    struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
    nlh->nlmsg_type = RTM_GETADDR;
    nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    nlh->nlmsg_seq = ++seq;
    struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
    ifa->ifa_family = AF_UNSPEC;
    naddrs = 0;
    if (mnl_socket_sendto(rt, nlh, nlh->nlmsg_len) < 0) die("send getaddr");
    talk(rt, addr_cb, NULL, seq);
}

/* Whether links or addresses changed since the last call: drains the subscribed socket without waiting. */
static int host_changed(struct mnl_socket *watch) {
    static int known;
    int changed = !known;
    known = 1;
    char note[8192];
    while (recv(mnl_socket_get_fd(watch), note, sizeof(note), MSG_DONTWAIT) > 0) changed = 1;
    return changed;
}

static int gen_cb(const struct nlmsghdr *nlh, void *data) {
    struct nftnl_gen *g = nftnl_gen_alloc();
    if (nftnl_gen_nlmsg_parse(nlh, g) >= 0) *(uint32_t *)data = nftnl_gen_get_u32(g, NFTNL_GEN_ID);
    nftnl_gen_free(g);
    return MNL_CB_OK;
}

static int ignore_cb(const struct nlmsghdr *nlh, void *data) { return MNL_CB_OK; }

/*
 * Appends a GETSETELEM for one key at *at; a missing element will be the expected answer (ENOENT).
 * Built as gatun builds it: table, set, then the element. libnftnl's
 * nftnl_set_elems_nlmsg_build_payload puts the set's name before the table's, other bytes.
 */
static void put_lookup(char **at, const char *set, const void *key, uint32_t len) {
    struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(*at, NFT_MSG_GETSETELEM, NFPROTO_INET, 0, ++seq);
    mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "gatun");
    mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, set);
    struct nlattr *list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
    struct nlattr *item = mnl_attr_nest_start(nlh, 1);
    struct nftnl_set_elem *e = nftnl_set_elem_alloc();
    nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, len);
    nftnl_set_elem_nlmsg_build_payload(nlh, e);
    nftnl_set_elem_free(e);
    mnl_attr_nest_end(nlh, item);
    mnl_attr_nest_end(nlh, list);
    *at += MNL_ALIGN(nlh->nlmsg_len);
}

/*
 * Sends GETGEN and the lookups in one datagram, none asking for an ACK, and reads until each has
 * its one answer (the generation, the element, or ENOENT); returns the generation.
 */
static uint32_t lookups(struct mnl_socket *nl, char *start, char *end, int count) {
    if (mnl_socket_sendto(nl, start, end - start) < 0) die("send lookups");
    uint32_t gen = 0;
    int answered = 0;
    while (answered < count) {
        int n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
        if (n < 0) die("recv lookups");
        for (struct nlmsghdr *m = (struct nlmsghdr *)buf; mnl_nlmsg_ok(m, n); m = mnl_nlmsg_next(m, &n)) {
            answered++;
            if (m->nlmsg_type == NLMSG_ERROR) {
                int error = ((struct nlmsgerr *) mnl_nlmsg_get_payload(m))->error;
                if (error != 0 && error != -ENOENT) { errno = -error; die("lookup"); }
            } else if ((m->nlmsg_type & 0xff) == NFT_MSG_NEWGEN) {
                gen_cb(m, &gen);
            }
        }
    }
    return gen;
}

/* Whether a TCP socket of the host would take a connection to the port on the wildcard or a
 * local address, as gatun asks before it publishes: one exact inet_diag lookup each, all in one
 * datagram, none asking for an ACK; each answers with the socket or with ENOENT. */
static int port_held(struct mnl_socket *diag, uint16_t port) {
    static char requests[1 << 15];
    char *at = requests;
    uint32_t first = seq + 1;
    for (int i = -1; i < naddrs; i++) {
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(at);
        nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
        nlh->nlmsg_flags = NLM_F_REQUEST;
        nlh->nlmsg_seq = ++seq;
        struct inet_diag_req_v2 *r = mnl_nlmsg_put_extra_header(nlh, sizeof(*r));
        r->sdiag_family = AF_INET;
        r->sdiag_protocol = IPPROTO_TCP;
        r->idiag_states = 1 << TCP_LISTEN;
        r->id.idiag_cookie[0] = r->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
        /* TCP looks the socket up by its source fields as the local end. */
        r->id.idiag_src[0] = i < 0 ? htonl(INADDR_ANY) : addrs[i];
        r->id.idiag_sport = htons(port);
        at += MNL_ALIGN(nlh->nlmsg_len);
    }
    if (mnl_socket_sendto(diag, requests, at - requests) < 0) die("send sock_diag");
    int found = 0;
    for (int answered = 0; answered < naddrs + 1; ) {
        int n = mnl_socket_recvfrom(diag, buf, sizeof(buf));
        if (n < 0) die("recv sock_diag");
        for (struct nlmsghdr *m = (struct nlmsghdr *) buf; mnl_nlmsg_ok(m, n); m = mnl_nlmsg_next(m, &n)) {
            if (m->nlmsg_seq < first || m->nlmsg_seq > seq) continue;
            answered++;
            if (m->nlmsg_type == NLMSG_ERROR) {
                int error = ((struct nlmsgerr *) mnl_nlmsg_get_payload(m))->error;
                if (error != 0 && error != -ENOENT) { errno = -error; die("sock_diag lookup"); }
            } else if (m->nlmsg_type == SOCK_DIAG_BY_FAMILY) {
                found++;
            }
        }
    }
    return found;
}

static int commit_one(struct mnl_socket *nl, uint32_t gen, const uint8_t key[8], const uint8_t data[8], const char *owner);

/* The ports4 key (tcp . HOST_PORT, padded to 4-byte registers) and data (ADDR . PORT) of a mapping. */
static void tcp_mapping(uint16_t hport, uint32_t caddr, uint16_t cport, uint8_t key[8], uint8_t data[8]) {
    memset(key, 0, 8);
    memset(data, 0, 8);
    key[0] = IPPROTO_TCP;
    uint16_t p = htons(hport);
    memcpy(key + 4, &p, 2);
    memcpy(data, &caddr, 4);
    p = htons(cport);
    memcpy(data + 4, &p, 2);
}

static void publish(struct mnl_socket *nl, struct mnl_socket *rt, struct mnl_socket *watch, struct mnl_socket *diag,
                    uint16_t hport, uint32_t caddr, uint16_t cport, const char *owner) {
    uint8_t key[8], data[8];
    tcp_mapping(hport, caddr, cport, key, data);

    if (host_changed(watch)) dump_addresses(rt);
    static char requests[1 << 15];
    char *at = requests;
    struct nlmsghdr *getgen = nftnl_nlmsg_build_hdr(at, NFT_MSG_GETGEN, AF_UNSPEC, 0, ++seq);
    at += MNL_ALIGN(getgen->nlmsg_len);
    put_lookup(&at, "ports4", key, sizeof(key));
    for (int i = 0; i < naddrs; i++) {
        uint8_t hkey[12] = {0};
        memcpy(hkey, &addrs[i], 4);
        memcpy(hkey + 4, key, 8);
        put_lookup(&at, "hostip4", hkey, sizeof(hkey));
    }
    uint32_t gen = lookups(nl, requests, at, naddrs + 2);
    if (port_held(diag, hport)) {
        fprintf(stderr, "host port %d is in use on the host\n", hport);
        exit(3);
    }
    if (commit_one(nl, gen, key, data, owner) != 0) {
        errno = EAGAIN;
        die("commit");
    }
}

/*
 * The batch of a publish: BEGIN with NFNL_BATCH_GENID gen, NEWSETELEM of one element in ports4
 * with the owner comment, END. Returns 0, or -ERESTART when the generation moved on.
 */
static int commit_one(struct mnl_socket *nl, uint32_t gen, const uint8_t key[8], const uint8_t data[8], const char *owner) {
    char batch[4096];
    struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(batch, sizeof(batch));
    uint32_t first = ++seq;
    struct nlmsghdr *begin = nftnl_batch_begin(mnl_nlmsg_batch_current(b), first);
    mnl_attr_put_u32(begin, NFNL_BATCH_GENID, htonl(gen));
    mnl_nlmsg_batch_next(b);

    struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_NEWSETELEM, NFPROTO_INET,
                                                 NLM_F_CREATE | NLM_F_ACK, ++seq);
    mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "gatun");
    mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "ports4");
    struct nlattr *list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
    struct nlattr *item = mnl_attr_nest_start(nlh, 1);
    struct nftnl_set_elem *e = nftnl_set_elem_alloc();
    nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, 8);
    nftnl_set_elem_set(e, NFTNL_SET_ELEM_DATA, data, 8);
    struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 2);
    nftnl_udata_put_strz(ud, NFTNL_UDATA_SET_ELEM_COMMENT, owner);
    nftnl_set_elem_set(e, NFTNL_SET_ELEM_USERDATA, nftnl_udata_buf_data(ud), nftnl_udata_buf_len(ud));
    nftnl_udata_buf_free(ud);
    nftnl_set_elem_nlmsg_build_payload(nlh, e);
    nftnl_set_elem_free(e);
    mnl_attr_nest_end(nlh, item);
    mnl_attr_nest_end(nlh, list);
    uint32_t last = seq;
    mnl_nlmsg_batch_next(b);
    nftnl_batch_end(mnl_nlmsg_batch_current(b), ++seq);
    mnl_nlmsg_batch_next(b);

    if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b), mnl_nlmsg_batch_size(b)) < 0) die("send batch");
    mnl_nlmsg_batch_stop(b);
    if (talk(nl, ignore_cb, NULL, 0) < 0 && errno != 0) {
        if (errno == ERESTART) return -ERESTART;
        die("commit");
    }
    (void) first;
    (void) last;
    return 0;
}

/* The current generation: one GETGEN. */
static uint32_t generation(struct mnl_socket *nl) {
    char request[256];
    nftnl_nlmsg_build_hdr(request, NFT_MSG_GETGEN, AF_UNSPEC, 0, ++seq);
    return lookups(nl, request, request + MNL_ALIGN(((struct nlmsghdr *) request)->nlmsg_len), 1);
}

/*
 * The limit of a publish: only its commit, one round trip, guarded by a generation this program
 * keeps itself (it made the last one; a commit that finds another reads it again), as a driver
 * that follows the ruleset plans from memory. No host-socket question, no lookups.
 */
static void commit_only(struct mnl_socket *nl, uint16_t hport, uint32_t caddr, uint16_t cport, const char *owner) {
    static uint32_t gen;
    static int known;
    uint8_t key[8], data[8];
    tcp_mapping(hport, caddr, cport, key, data);
    if (!known) {
        gen = generation(nl);
        known = 1;
    }
    while (commit_one(nl, gen, key, data, owner) == -ERESTART) gen = generation(nl);
    gen = gen + 1 == 0 ? 1 : gen + 1;
}

/* Decodes one notification as a follower must: set elements into libnftnl's objects, the rest by header. */
static int heard_cb(const struct nlmsghdr *nlh, void *data) {
    (void) data;
    int type = NFNL_MSG_TYPE(nlh->nlmsg_type);
    if (type == NFT_MSG_NEWSETELEM || type == NFT_MSG_DELSETELEM) {
        struct nftnl_set *s = nftnl_set_alloc();
        if (s == NULL || nftnl_set_elems_nlmsg_parse(nlh, s) < 0) die("decode a notification");
        nftnl_set_free(s);
    }
    return MNL_CB_OK;
}

/*
 * Listens to the namespace's nftables notifications (NFNLGRP_NFTABLES) and decodes each, until the
 * process ends. With a listener the kernel builds and sends a notification of every change in
 * the commit itself: a driver that follows the ruleset pays that in each of its commits.
 */
static void *listen_thread(void *arg) {
    struct mnl_socket *l = arg;
    static char buf[1 << 16];
    for (;;) {
        ssize_t n = mnl_socket_recvfrom(l, buf, sizeof(buf));
        if (n < 0) {
            if (errno == ENOBUFS) continue;
            die("listen");
        }
        if (mnl_cb_run(buf, (size_t) n, 0, 0, heard_cb, NULL) < 0) die("decode notifications");
    }
    return NULL;
}

/* Starts the listener once; it is in place before this returns (bound before the thread starts). */
static void start_listening(void) {
    static int started;
    if (started) return;
    struct mnl_socket *l = mnl_socket_open(NETLINK_NETFILTER);
    if (!l || mnl_socket_bind(l, 1 << (NFNLGRP_NFTABLES - 1), MNL_SOCKET_AUTOPID) < 0) die("listener socket");
    pthread_t t;
    if (pthread_create(&t, NULL, listen_thread, l) != 0) die("listener thread");
    started = 1;
}

/*
 * The floor of a bulk publish or a repair: N new elements in ports4 in one batch, without the
 * lookups before it. Element i maps tcp (even i) or udp (odd i) host port FIRST + i/2 to the
 * container's same port, with the owner comment. The elements go in NEWSETELEM messages of at
 * most 64 KiB each (the element list is an attribute with a 16-bit length), each acknowledged.
 */
static void bulk(struct mnl_socket *nl, int first, int n, uint32_t caddr, const char *owner) {
    size_t cap = (size_t) n * 128 + (1 << 16);
    char *batch = malloc(cap);
    if (batch == NULL) die("malloc");
    int sndbuf = (int) cap;
    if (setsockopt(mnl_socket_get_fd(nl), SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0) die("SO_SNDBUFFORCE");
    struct nftnl_udata_buf *ud = nftnl_udata_buf_alloc(NFTNL_UDATA_COMMENT_MAXLEN + 2);
    nftnl_udata_put_strz(ud, NFTNL_UDATA_SET_ELEM_COMMENT, owner);

    struct mnl_nlmsg_batch *b = mnl_nlmsg_batch_start(batch, cap);
    nftnl_batch_begin(mnl_nlmsg_batch_current(b), ++seq);
    mnl_nlmsg_batch_next(b);
    int messages = 0;
    for (int i = 0; i < n;) {
        struct nlmsghdr *nlh = nftnl_nlmsg_build_hdr(mnl_nlmsg_batch_current(b), NFT_MSG_NEWSETELEM, NFPROTO_INET,
                                                     NLM_F_CREATE | NLM_F_ACK, ++seq);
        mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_TABLE, "gatun");
        mnl_attr_put_strz(nlh, NFTA_SET_ELEM_LIST_SET, "ports4");
        struct nlattr *list = mnl_attr_nest_start(nlh, NFTA_SET_ELEM_LIST_ELEMENTS);
        for (int k = 1; i < n && nlh->nlmsg_len < 65536 - 512; i++, k++) {
            uint8_t key[8] = {0}, data[8] = {0};
            key[0] = i % 2 == 0 ? IPPROTO_TCP : IPPROTO_UDP;
            uint16_t p = htons((uint16_t) (first + i / 2));
            memcpy(key + 4, &p, 2);
            memcpy(data, &caddr, 4);
            memcpy(data + 4, &p, 2);
            struct nlattr *item = mnl_attr_nest_start(nlh, k);
            struct nftnl_set_elem *e = nftnl_set_elem_alloc();
            nftnl_set_elem_set(e, NFTNL_SET_ELEM_KEY, key, sizeof(key));
            nftnl_set_elem_set(e, NFTNL_SET_ELEM_DATA, data, sizeof(data));
            nftnl_set_elem_set(e, NFTNL_SET_ELEM_USERDATA, nftnl_udata_buf_data(ud), nftnl_udata_buf_len(ud));
            nftnl_set_elem_nlmsg_build_payload(nlh, e);
            nftnl_set_elem_free(e);
            mnl_attr_nest_end(nlh, item);
        }
        mnl_attr_nest_end(nlh, list);
        messages++;
        mnl_nlmsg_batch_next(b);
    }
    nftnl_batch_end(mnl_nlmsg_batch_current(b), ++seq);
    mnl_nlmsg_batch_next(b);
    nftnl_udata_buf_free(ud);

    if (mnl_socket_sendto(nl, mnl_nlmsg_batch_head(b), mnl_nlmsg_batch_size(b)) < 0) die("send bulk batch");
    mnl_nlmsg_batch_stop(b);
    free(batch);
    for (int acked = 0; acked < messages;) {
        int got = mnl_socket_recvfrom(nl, buf, sizeof(buf));
        if (got < 0) die("recv bulk acks");
        for (struct nlmsghdr *m = (struct nlmsghdr *)buf; mnl_nlmsg_ok(m, got); m = mnl_nlmsg_next(m, &got)) {
            if (m->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *err = mnl_nlmsg_get_payload(m);
                if (err->error != 0) {
                    errno = -err->error;
                    die("bulk commit");
                }
                acked++;
            }
        }
    }
}

static long long now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000LL + t.tv_nsec / 1000;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s HOST_PORT CONTAINER_IP CONTAINER_PORT OWNER [COUNT]\n", argv[0]);
        return 2;
    }
    int hport = atoi(argv[1]), cport = atoi(argv[3]), count = argc > 5 ? atoi(argv[5]) : 1;
    uint32_t caddr;
    if (inet_pton(AF_INET, argv[2], &caddr) != 1) {
        fprintf(stderr, "bad address %s\n", argv[2]);
        return 2;
    }
    struct mnl_socket *nl = mnl_socket_open(NETLINK_NETFILTER);
    struct mnl_socket *rt = mnl_socket_open(NETLINK_ROUTE);
    struct mnl_socket *watch = mnl_socket_open(NETLINK_ROUTE);
    struct mnl_socket *diag = mnl_socket_open(NETLINK_SOCK_DIAG);
    if (!nl || !rt || !watch || !diag || mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0
        || mnl_socket_bind(diag, 0, MNL_SOCKET_AUTOPID) < 0
        || mnl_socket_bind(rt, 0, MNL_SOCKET_AUTOPID) < 0
        || mnl_socket_bind(watch, RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR, MNL_SOCKET_AUTOPID) < 0)
        die("socket");
    seq = time(NULL);
    if (count == 0) {
        char line[64];
        while (fgets(line, sizeof(line), stdin)) {
            int first, n = 1;
            if (strncmp(line, "bulk ", 5) == 0) {
                if (sscanf(line + 5, "%d %d", &first, &n) != 2 || first < 1 || n < 1 || first + (n - 1) / 2 > 65535) {
                    fprintf(stderr, "bad bulk line: %s", line);
                    return 2;
                }
                long long t0 = now_us();
                bulk(nl, first, n, caddr, argv[4]);
                printf("%lld\n", now_us() - t0);
                fflush(stdout);
                continue;
            }
            int heard = strncmp(line, "heard ", 6) == 0;
            if (strncmp(line, "commit ", 7) == 0 || heard) {
                if (sscanf(line + (heard ? 6 : 7), "%d %d", &first, &n) < 1 || n < 1) {
                    fprintf(stderr, "bad commit line: %s", line);
                    return 2;
                }
                if (heard) start_listening();
                for (int p = first; p < first + n; p++) {
                    long long t0 = now_us();
                    commit_only(nl, p, caddr, p, argv[4]);
                    printf("%lld\n", now_us() - t0);
                }
                fflush(stdout);
                continue;
            }
            if (sscanf(line, "%d %d", &first, &n) < 1 || n < 1) {
                fprintf(stderr, "bad request line: %s", line);
                return 2;
            }
            for (int p = first; p < first + n; p++) {
                long long t0 = now_us();
                publish(nl, rt, watch, diag, p, caddr, p, argv[4]);
                printf("%lld\n", now_us() - t0);
            }
            fflush(stdout);
        }
    }
    for (int i = 0; i < count; i++) {
        long long t0 = now_us();
        publish(nl, rt, watch, diag, hport + i, caddr, cport, argv[4]);
        printf("%lld\n", now_us() - t0);
    }
    mnl_socket_close(nl);
    mnl_socket_close(rt);
    mnl_socket_close(watch);
    mnl_socket_close(diag);
    return 0;
}
