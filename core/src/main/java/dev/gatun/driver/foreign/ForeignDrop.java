package dev.gatun.driver.foreign;

/**
 * One place where another firewall drops forwarded traffic that gatun's own forward chain
 * would let through, and what became of it.
 *
 * @param firewall who owns it: "iptables-nft", "ip6tables-legacy", "firewalld", "nftables"
 * @param where    the table and chain, in that firewall's words ("filter FORWARD", "inet filter forward")
 * @param why      what drops there ("policy DROP", "Docker's chains", "a rule that drops")
 * @param action   what gatun did, or the one rule the user must add
 * @param open     whether gatun's bridges get through (gatun opened it, or the user's rule is there)
 */
public record ForeignDrop(String firewall, String where, String why, String action, boolean open) {

    /** One line for logs and the doctor. */
    public String describe() {
        return firewall + " " + where + " (" + why + "): " + action;
    }
}
