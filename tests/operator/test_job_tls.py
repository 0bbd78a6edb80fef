"""Each revision's certificates: issued into one Secret, each pod given only its own key
pair by reference, and certificates that name their holder under the revision's CA."""
import base64
import json

from cryptography import x509
from cryptography.x509.oid import NameOID

from segflow.security.identities import Role
from segflow_operator import job_tls
from segflow_operator.manifests import coordinator_pod, state_key_secret, tls_secret, worker_pod
from segflow_operator.spec import parse

BODY = {"apiVersion": "segflow.io/v1alpha1", "kind": "StreamJob", "metadata": {"name": "j", "namespace": "n",
                                                                                "uid": "u"}}
SPEC = parse({"image": "segflow/engine:0.1.0", "job": {"module": "examples.wordcount"}, "parallelism": 3,
              "checkpointing": {"stateUrl": "s3://b/jobs"}})


def _certificate(secret: dict, key: str) -> x509.Certificate:
    return x509.load_pem_x509_certificate(base64.b64decode(secret["data"][key]))


def test_every_holder_gets_a_certificate_in_its_name_from_the_revision_ca():
    secret = tls_secret(BODY, SPEC, 4)
    assert secret["metadata"]["name"] == "j-4-tls" and secret["metadata"]["ownerReferences"][0]["uid"] == "u"
    ca = _certificate(secret, "ca.crt")
    for holder, role in [("coordinator", Role.COORDINATOR), ("client", Role.CLIENT),
                         *((f"w{i}", Role.WORKER) for i in range(3))]:
        cert = _certificate(secret, f"{holder}.crt")
        cert.verify_directly_issued_by(ca)
        assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == holder
        hosts = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
            x509.DNSName)
        assert hosts == [role.host]
    assert "w3.crt" not in secret["data"]
    other = tls_secret(BODY, SPEC, 5)
    assert _certificate(other, "ca.crt").public_key() != ca.public_key(), "revisions must not share a CA"


def test_pods_reference_only_their_own_key_pair_and_carry_no_key():
    secret = tls_secret(BODY, SPEC, 2)
    pods = {"coordinator": coordinator_pod(BODY, SPEC, 2, ""),
            **{f"w{i}": worker_pod(BODY, SPEC, 2, i, "10.0.0.1") for i in range(3)}}
    for holder, pod in pods.items():
        env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in pod["spec"]["containers"][0]["env"]
               if "secretKeyRef" in e.get("valueFrom", {})}
        assert env == {"SEGFLOW_TLS_CA": {"name": "j-2-tls", "key": "ca.crt"},
                       "SEGFLOW_TLS_CERT": {"name": "j-2-tls", "key": f"{holder}.crt"},
                       "SEGFLOW_TLS_KEY": {"name": "j-2-tls", "key": f"{holder}.key"},
                       "SEGFLOW_STATE_KEY": {"name": "j-state-key", "key": "key"}}
        rendered = json.dumps(pod)
        for value in secret["data"].values():
            assert base64.b64decode(value).decode().splitlines()[1] not in rendered


def test_the_state_key_is_random_kept_and_outlives_the_job():
    first, second = state_key_secret(BODY), state_key_secret(BODY)
    assert first["metadata"]["name"] == "j-state-key" and "ownerReferences" not in first["metadata"]
    assert len(first["stringData"]["key"]) == 64 and first["stringData"]["key"] != second["stringData"]["key"]


def test_the_operator_reads_its_client_identity_back_from_the_secret():
    secret = tls_secret(BODY, SPEC, 1)
    identity = job_tls.client_identity(secret)
    cert = x509.load_pem_x509_certificate(identity.cert)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "client"
    assert identity.ca == base64.b64decode(secret["data"]["ca.crt"])
