/*
 * gatun entry header: conventions of the nftables userspace tool (nft) that reach the kernel
 * as opaque values, and that no installed header declares.
 *
 * nft stores a set's key and data types as its own datatype numbers (NFTA_SET_KEY_TYPE,
 * NFTA_SET_DATA_TYPE, concatenations packed NFT_USERSPACE_TYPE_BITS bits per component), and
 * describes sets and elements in user data (the NFTNL_UDATA_* records). For a ruleset that
 * gatun writes to list exactly as if nft had written it, gatun must use the same numbers. They
 * are nft's stable on-the-wire conventions (src/datatype.h, include/expression.h and
 * include/utils.h of nftables); this file states them once so the bindings carry them like
 * every other constant, and nothing in Java spells them out.
 */
#ifndef GATUN_NFT_USERSPACE_H
#define GATUN_NFT_USERSPACE_H

/* nft's datatype numbers (enum datatypes in nftables' datatype.h). */
enum nft_userspace_datatype {
	NFT_USERSPACE_TYPE_VERDICT = 1,
	NFT_USERSPACE_TYPE_IPADDR = 7,
	NFT_USERSPACE_TYPE_IP6ADDR = 8,
	NFT_USERSPACE_TYPE_ETHERADDR = 9,
	NFT_USERSPACE_TYPE_INET_PROTOCOL = 12,
	NFT_USERSPACE_TYPE_INET_SERVICE = 13,
	NFT_USERSPACE_TYPE_MARK = 19,
	NFT_USERSPACE_TYPE_IFNAME = 41,
};

/* Bits per component when nft packs a concatenation's datatypes into one number. */
#define NFT_USERSPACE_TYPE_BITS 6

/* nft's byte order codes, stored in the set user data (enum byteorder). */
enum nft_userspace_byteorder {
	NFT_USERSPACE_BYTEORDER_INVALID = 0,
	NFT_USERSPACE_BYTEORDER_HOST = 1,
	NFT_USERSPACE_BYTEORDER_BIG = 2,
};

/* The expression kind nft records for a concatenated key or data (EXPR_CONCAT). */
#define NFT_USERSPACE_EXPR_CONCAT 13

#endif
