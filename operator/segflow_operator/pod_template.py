"""``spec.podTemplate`` merged into a pod the operator made (pure).

Lists are appended after the operator's own entries (its ``POD_IP`` stays first, so a
user's value may refer to it as ``$(POD_IP)``); maps are merged with the operator's keys
winning; scalar pod settings are taken as given. Credentials reach the pods only as
references (``secretKeyRef``, ``envFrom.secretRef``, secret volumes): the pod objects, and
so pod arguments, config maps and the status, never hold their values.
"""
from __future__ import annotations

import copy

POD_FIELDS = ("serviceAccountName", "automountServiceAccountToken", "nodeSelector", "tolerations", "affinity")
CONTAINER_LISTS = ("env", "envFrom", "volumeMounts")


def apply_template(pod: dict, template: dict) -> dict:
    """A copy of ``pod`` with ``template`` merged into it and into each of its containers."""
    if not template:
        return pod
    merged = copy.deepcopy(pod)
    meta, spec = merged["metadata"], merged["spec"]
    meta["labels"] = {**(template.get("labels") or {}), **meta.get("labels", {})}
    if template.get("annotations"):
        meta["annotations"] = {**template["annotations"], **meta.get("annotations", {})}
    for key in POD_FIELDS:
        if key in template:
            spec[key] = copy.deepcopy(template[key])
    if template.get("volumes"):
        spec["volumes"] = [*spec.get("volumes", []), *copy.deepcopy(template["volumes"])]
    for container in spec["containers"]:
        for key in CONTAINER_LISTS:
            if template.get(key):
                container[key] = [*container.get(key, []), *copy.deepcopy(template[key])]
    return merged
