package dev.gatun.driver.foreign;

import java.util.List;
import java.util.Optional;

/**
 * How gatun reads and changes the filter table of one iptables variant and family: through the
 * variant's own {@code -save} and {@code -restore} ({@link SavedFilterTable}, legacy x_tables),
 * or over netlink where the table is an nftables one ({@link NetlinkFilterTable}, iptables-nft).
 */
interface FilterTable {

    /** The table as {@code -save} would print it (rules only as far as {@link XtablesForward} needs them). */
    XtablesForward.Filter read();

    /**
     * Applies {@code script} (lines of {@link XtablesForward#script}, in restore syntax) to the
     * table {@code seen} describes, all or nothing. Empty when it is in; else why not (the table
     * may have changed since it was read: the caller reads again and retries once).
     */
    Optional<String> apply(XtablesForward.Filter seen, List<String> script);
}
