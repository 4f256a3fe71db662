/* gatun entry header: the kernel's netlink uAPI (message layouts and constants). */
#ifndef GATUN_KERNEL_H
#define GATUN_KERNEL_H
#include <sys/socket.h>
#include <linux/netlink.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nf_tables_compat.h>
#include <linux/netfilter_ipv4.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nf_log.h>
#include <linux/netfilter/nf_conntrack_tuple_common.h>
#include <linux/icmp.h>
#include <linux/icmpv6.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nfnetlink_conntrack.h>
#include <linux/netfilter/nf_conntrack_tcp.h>
#include <linux/rtnetlink.h>
#include <linux/if_link.h>
#include <linux/if_addr.h>
#include <linux/if_arp.h>
#include <linux/if.h>
#include <linux/if_ether.h>
#include <linux/netdevice.h>
#include <linux/veth.h>
#include <linux/if_bridge.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>

/*
 * The tuple fields a ctnetlink dump filters on (CTA_FILTER_ORIG_FLAGS, Linux 5.10 on). They are
 * kernel ABI, but only net/netfilter/nf_internals.h defines them and no uapi header exports
 * them, so gatun states the three it uses here, with the kernel's names and values.
 */
#ifndef CTA_FILTER_F_CTA_IP_DST
#define CTA_FILTER_F_CTA_IP_DST (1 << 1)
#define CTA_FILTER_F_CTA_PROTO_NUM (1 << 3)
#define CTA_FILTER_F_CTA_PROTO_DST_PORT (1 << 5)
#endif
#endif
