"""The partition's filter rules (partition.cut_rules), without a cluster: what a cut-off
site's node namespace rejects."""
from partition import CHAIN, cut_rules


def test_the_cut_rejects_both_directions_to_the_peer_and_the_pods_way_to_the_store():
    rules = cut_rules("10.131.0.0/16", "10.130.0.1", 43145)
    assert rules == [["FORWARD", "-d", "10.131.0.0/16", "-j", CHAIN], ["FORWARD", "-s", "10.131.0.0/16", "-j", CHAIN],
                     ["INPUT", "-d", "10.130.0.1", "-p", "tcp", "--dport", "43145", "-j", CHAIN]]


def test_every_rule_jumps_to_the_one_chain_healing_deletes_by_name():
    assert all(rule[-2:] == ["-j", CHAIN] for rule in cut_rules("10.1.0.0/16", "10.2.0.1", 80))
