"""Services as the pods of a ``netns`` node see them (pure functions of Service and
Endpoints objects, as the API returns them).

Two outputs, both rewritten whenever a Service or its Endpoints change:
- names: /etc/hosts lines per pod namespace. A ClusterIP Service's names map to its
  cluster IP; a headless Service's names map to each of its ready pod IPs (one line each),
  and ``hostname.subdomain`` of pods that set both to their own IP.
- forwarding: the node namespace's ``nat`` table, in iptables-restore form, with the rules
  kube-proxy's iptables mode keeps: traffic to a cluster IP and port is DNATed to one of the
  ready endpoints, picked at random with equal odds, and masqueraded so the endpoint's
  reply comes back through the node (the pods share one bridge, and an un-masqueraded reply
  would go straight to the client from an address it never dialled).
"""
from __future__ import annotations

from dataclasses import dataclass

CHAIN = "SEGFLOW-SERVICES"
DOMAIN = "svc.cluster.local"


@dataclass(frozen=True)
class Forward:
    """One service port forwarded to its endpoints (address, port)."""
    cluster_ip: str
    port: int
    protocol: str
    endpoints: tuple[tuple[str, int], ...]


def _key(obj: dict) -> tuple[str, str]:
    return obj["metadata"]["namespace"], obj["metadata"]["name"]


def _headless(service: dict) -> bool:
    return (service.get("spec") or {}).get("clusterIP") in (None, "", "None")


def _names(name: str, namespace: str, own_namespace: str) -> str:
    names = [f"{name}.{namespace}.{DOMAIN}", f"{name}.{namespace}.svc", f"{name}.{namespace}"]
    return " ".join(names + ([name] if namespace == own_namespace else []))


def _ready_addresses(endpoints: dict | None) -> list[dict]:
    return [a for subset in (endpoints or {}).get("subsets") or [] for a in subset.get("addresses") or []]


def host_entries(services: list[dict], endpoints: list[dict], own_namespace: str) -> list[tuple[str, str]]:
    """(address, names) lines for a pod in ``own_namespace``: every Service of the cluster by
    its qualified names, and by its short name too when it is in the pod's namespace."""
    by_key = {_key(e): e for e in endpoints}
    entries = []
    for service in sorted(services, key=_key):
        namespace, name = _key(service)
        spec = service.get("spec") or {}
        if spec.get("type") == "ExternalName":
            continue
        if not _headless(service):
            entries.append((spec["clusterIP"], _names(name, namespace, own_namespace)))
            continue
        addresses = _ready_addresses(by_key.get((namespace, name)))
        for address in sorted(addresses, key=lambda a: a["ip"]):
            entries.append((address["ip"], _names(name, namespace, own_namespace)))
        for address in sorted((a for a in addresses if a.get("hostname")), key=lambda a: a["hostname"]):
            entries.append((address["ip"], _names(f"{address['hostname']}.{name}", namespace, own_namespace)))
    return entries


def forwards(services: list[dict], endpoints: list[dict]) -> list[Forward]:
    """Every (cluster IP, port) with the ready endpoints it forwards to. An Endpoints subset
    names its ports like the Service does, with the target port already resolved."""
    by_key = {_key(e): e for e in endpoints}
    result = []
    for service in sorted(services, key=_key):
        spec = service.get("spec") or {}
        if _headless(service) or spec.get("type") == "ExternalName":
            continue
        subsets = (by_key.get(_key(service)) or {}).get("subsets") or []
        for port in spec.get("ports") or []:
            protocol = port.get("protocol") or "TCP"
            targets = sorted((address["ip"], int(p["port"]))
                             for subset in subsets for p in subset.get("ports") or []
                             if (p.get("name") or "") == (port.get("name") or "")
                             and (p.get("protocol") or "TCP") == protocol
                             for address in subset.get("addresses") or [])
            result.append(Forward(spec["clusterIP"], int(port["port"]), protocol, tuple(targets)))
    return result


def nat_table(rules: list[Forward], pod_network: str) -> str:
    """The node namespace's whole ``nat`` table for ``iptables-restore`` (which replaces it
    atomically). A service port without ready endpoints gets no rule, so a connection to it
    finds no route and fails at once, instead of hanging."""
    lines = ["*nat", ":PREROUTING ACCEPT [0:0]", ":INPUT ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]",
             ":POSTROUTING ACCEPT [0:0]", f":{CHAIN} - [0:0]",
             f"-A PREROUTING -j {CHAIN}", f"-A OUTPUT -j {CHAIN}",
             f"-A POSTROUTING -s {pod_network} -m conntrack --ctstate DNAT -j MASQUERADE"]
    for rule in rules:
        match = f"-A {CHAIN} -d {rule.cluster_ip}/32 -p {rule.protocol.lower()} --dport {rule.port}"
        count = len(rule.endpoints)
        for i, (address, port) in enumerate(rule.endpoints):
            odds = "" if i == count - 1 else f" -m statistic --mode random --probability {1 / (count - i):.5f}"
            lines.append(f"{match}{odds} -j DNAT --to-destination {address}:{port}")
    lines.append("COMMIT")
    return "\n".join(lines) + "\n"
