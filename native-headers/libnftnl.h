/* gatun entry header: libnftnl, which encodes and decodes nf_tables objects. */
#ifndef GATUN_LIBNFTNL_H
#define GATUN_LIBNFTNL_H
#include <stdint.h>
#include <stdio.h>
#include <libnftnl/common.h>
#include <libnftnl/batch.h>
#include <libnftnl/gen.h>
#include <libnftnl/table.h>
#include <libnftnl/chain.h>
#include <libnftnl/rule.h>
#include <libnftnl/expr.h>
#include <libnftnl/set.h>
#include <libnftnl/object.h>
#include <libnftnl/udata.h>
#endif
