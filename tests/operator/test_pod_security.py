"""Every pod the operator renders meets the Pod Security Standards' "restricted" profile
(checked rule by rule, as the admission controller would) and validates strictly
against the Kubernetes schemas; a podTemplate cannot take a pod out of the profile."""
import kubernetes_validate
import pytest

from segflow_operator.manifests import coordinator_pod, network_policy, tls_secret, worker_pod
from segflow_operator.spec import InvalidSpec, check_endpoints, parse

BODY = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "j", "namespace": "n",
                                                                                "uid": "u"}}
BASE = {"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"},
        "checkpointing": {"stateUrl": "s3://b/jobs"}}
TEMPLATE = {"envFrom": [{"secretRef": {"name": "s3"}}], "volumes": [{"name": "certs", "secret": {"secretName": "c"}}],
            "volumeMounts": [{"name": "certs", "mountPath": "/certs"}], "nodeSelector": {"zone": "a"}}
SPECS = {
    "plain": BASE,
    "batch stage": {**BASE, "batchStage": {"module": "m", "function": "f", "output": "s3://b/out",
                                           "input": "s3://b/in"}},
    "pod template": {**BASE, "podTemplate": TEMPLATE, "resources": {"limits": {"memory": "2Gi"}}},
    "disaster recovery": {**BASE, "checkpointing": {"protocol": "segment"},
                          "disasterRecovery": {"backupUrl": "s3://b/backup", "clusterName": "east"}},
}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim",
                      "projected", "secret"}
VERSIONS = ["1.25.0", kubernetes_validate.latest_version()]


def _pods():
    for label, raw in SPECS.items():
        spec = parse(raw)
        yield f"{label}: coordinator", coordinator_pod(BODY, spec, 3, "auto", lease_generation=2)
        yield f"{label}: worker", worker_pod(BODY, spec, 3, 1, "10.0.0.1")


def restricted_violations(pod: dict) -> list[str]:
    """The rules of the baseline and restricted profiles this pod breaks (empty: none)."""
    spec, found = pod["spec"], []
    pod_context = spec.get("securityContext") or {}
    containers = spec["containers"] + spec.get("initContainers", [])
    for host in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(host):
            found.append(f"{host} is set")
    for volume in spec.get("volumes", []):
        kinds = set(volume) - {"name"}
        if not kinds <= RESTRICTED_VOLUMES:
            found.append(f"volume {volume['name']} is of kind {sorted(kinds)}")
    if (pod_context.get("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost", None):
        found.append("the pod's seccomp profile is not RuntimeDefault or Localhost")
    if pod_context.get("runAsUser") == 0:
        found.append("the pod runs as uid 0")
    for name in pod_context.get("sysctls") or []:
        found.append(f"sysctl {name} is set")
    for container in containers:
        c = container.get("securityContext") or {}
        who = f"container {container['name']}"
        if c.get("privileged"):
            found.append(f"{who} is privileged")
        if c.get("allowPrivilegeEscalation") is not False:
            found.append(f"{who} does not set allowPrivilegeEscalation: false")
        capabilities = c.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or []):
            found.append(f"{who} does not drop ALL capabilities")
        if set(capabilities.get("add") or []) - {"NET_BIND_SERVICE"}:
            found.append(f"{who} adds capabilities")
        if not (c.get("runAsNonRoot") is True or (pod_context.get("runAsNonRoot") is True
                                                  and c.get("runAsNonRoot") is not False)):
            found.append(f"{who} may run as root")
        if c.get("runAsUser") == 0:
            found.append(f"{who} runs as uid 0")
        seccomp = (c.get("seccompProfile") or pod_context.get("seccompProfile") or {}).get("type")
        if seccomp not in ("RuntimeDefault", "Localhost"):
            found.append(f"{who} has no RuntimeDefault seccomp profile")
        if c.get("procMount", "Default") != "Default":
            found.append(f"{who} unmasks /proc")
        if c.get("readOnlyRootFilesystem") is not True:
            found.append(f"{who} has a writable root file system")
        if any(p.get("hostPort") for p in container.get("ports", [])):
            found.append(f"{who} uses a host port")
    return found


@pytest.mark.parametrize("label,pod", list(_pods()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_rendered_pod_is_restricted_and_valid(label, pod):
    assert restricted_violations(pod) == []
    for version in VERSIONS:
        kubernetes_validate.validate(pod, version, strict=True)


def test_the_rules_catch_what_they_should():
    pod = worker_pod(BODY, parse(BASE), 1, 0, "10.0.0.1")
    pod["spec"]["hostNetwork"] = True
    pod["spec"]["volumes"].append({"name": "root", "hostPath": {"path": "/"}})
    pod["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    found = restricted_violations(pod)
    assert "hostNetwork is set" in found and "volume root is of kind ['hostPath']" in found
    assert "container worker is privileged" in found and "container worker may run as root" not in found
    pod["spec"]["securityContext"] = {}
    assert "container worker may run as root" in restricted_violations(pod)


def test_the_secret_validates_strictly():
    for version in VERSIONS:
        kubernetes_validate.validate(tls_secret(BODY, parse(BASE), 1), version, strict=True)


@pytest.mark.parametrize("volume", [{"name": "h", "hostPath": {"path": "/var/run/docker.sock"}},
                                    {"name": "n", "nfs": {"server": "x", "path": "/"}}])
def test_a_pod_template_cannot_add_a_volume_outside_the_profile(volume):
    with pytest.raises(InvalidSpec, match="Pod Security 'restricted'"):
        parse({**BASE, "podTemplate": {"volumes": [volume]}})


def test_the_network_policy_admits_the_job_the_operator_and_scrapers_only():
    policy = network_policy(BODY)
    for version in VERSIONS:
        kubernetes_validate.validate(policy, version, strict=True)
    assert policy["spec"]["podSelector"] == {"matchLabels": {"segflow.io/job": "j"}}
    peers = policy["spec"]["ingress"][0]["from"]
    assert [p["podSelector"]["matchLabels"] for p in peers] == [
        {"segflow.io/job": "j"}, {"app.kubernetes.io/name": "segflow", "app.kubernetes.io/component": "operator"},
        {"segflow.io/scraper": "true"}]


@pytest.mark.parametrize("field", ["checkpointing", "batchStage", "disasterRecovery"])
def test_an_s3_endpoint_outside_the_allow_list_is_refused(field):
    raw = {**BASE, "batchStage": {"module": "m", "function": "f", "output": "s3://b/out", "input": "s3://b/in"},
           "checkpointing": {"protocol": "segment"},
           "disasterRecovery": {"backupUrl": "s3://b/backup", "clusterName": "east"}}
    raw[field] = {**raw[field], "s3Endpoint": "http://169.254.169.254"}
    spec = parse(raw)
    with pytest.raises(InvalidSpec, match=r"s3Endpoint 'http://169.254.169.254' is not an allowed"):
        check_endpoints(spec, frozenset({"http://127.0.0.1:9000"}))
    check_endpoints(spec, frozenset({"http://169.254.169.254"}))
