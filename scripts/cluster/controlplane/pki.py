"""Credentials of a local cluster: a CA, the API server's serving certificate, the node
agent's kubelet API certificate and the API server's client certificate for it, the
service-account signing key pair, static bearer tokens, and kubeconfig files.

Generated once per cluster with openssl and kept in its state directory, so a restarted
cluster keeps its identities (kubeconfigs written earlier stay valid).
"""
from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess

from .layout import Layout

# Static token users: (user, uid, groups). The node agent stands in for kubelet and
# scheduler, which need wide rights; it gets its own name so its requests are attributable.
TOKEN_USERS = (("admin", "admin", "system:masters"),
               ("system:kube-controller-manager", "kube-controller-manager", ""),
               ("segflow-node-agent", "segflow-node-agent", "system:masters"))


# The API server's name towards the node agent's kubelet API (the only client it serves).
KUBELET_CLIENT = "kube-apiserver-kubelet-client"


class CertificateError(RuntimeError):
    """openssl failed; the message carries its output."""


def _openssl(*args: str) -> None:
    result = subprocess.run(["openssl", *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise CertificateError(f"openssl {args[0]} failed: {result.stderr.strip()}")


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def make_certificates(c: Layout) -> None:
    """The CA and the service-account key pair, kept if they exist; the API server
    certificate, valid for loopback, the node bridge's gateway (where pods from images reach
    the API server) and the in-cluster service names, made again when it lacks one."""
    pki = c.path("pki")
    os.makedirs(pki, exist_ok=True)
    ca_key, ca_crt = os.path.join(pki, "ca.key"), os.path.join(pki, "ca.crt")
    complete = os.path.exists(os.path.join(pki, "sa.pub"))
    if not complete:
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca_crt,
                 "-days", "3650", "-subj", f"/CN=segflow-{c.name}-ca")
    extensions = os.path.join(pki, "apiserver.ext")
    names = (f"subjectAltName=IP:127.0.0.1,IP:{c.first_service_ip},DNS:localhost,"
             "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,"
             "DNS:kubernetes.default.svc.cluster.local\nextendedKeyUsage=serverAuth\n")
    if not complete or _read(extensions) != names:
        with open(extensions, "w") as f:
            f.write(names)
        key, csr, crt = (os.path.join(pki, f"apiserver.{e}") for e in ("key", "csr", "crt"))
        _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=kube-apiserver")
        _openssl("x509", "-req", "-in", csr, "-CA", ca_crt, "-CAkey", ca_key, "-CAcreateserial", "-out", crt,
                 "-days", "3650", "-extfile", extensions)
    _issue(pki, "kubelet", f"/CN={c.name}-node", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _issue(pki, "apiserver-kubelet-client", f"/CN={KUBELET_CLIENT}", "extendedKeyUsage=clientAuth\n")
    if not complete:
        _openssl("genrsa", "-out", os.path.join(pki, "sa.key.tmp"), "2048")
        _openssl("rsa", "-in", os.path.join(pki, "sa.key.tmp"), "-pubout", "-out", os.path.join(pki, "sa.pub.tmp"))
        os.replace(os.path.join(pki, "sa.key.tmp"), os.path.join(pki, "sa.key"))
        os.replace(os.path.join(pki, "sa.pub.tmp"), os.path.join(pki, "sa.pub"))   # last: marks the set complete


def _issue(pki: str, name: str, subject: str, extensions: str) -> None:
    """``name``.crt and .key signed by the cluster's CA, unless they exist: the node agent's
    serving certificate for its kubelet API, and the API server's client certificate for it."""
    key, csr, crt, ext = (os.path.join(pki, f"{name}.{e}") for e in ("key", "csr", "crt", "ext"))
    if os.path.exists(crt):
        return
    with open(ext, "w") as f:
        f.write(extensions)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", subject)
    _openssl("x509", "-req", "-in", csr, "-CA", os.path.join(pki, "ca.crt"), "-CAkey", os.path.join(pki, "ca.key"),
             "-CAcreateserial", "-out", crt + ".tmp", "-days", "3650", "-extfile", ext)
    os.replace(crt + ".tmp", crt)


def _token_row(user: str, uid: str, groups: str) -> str:
    token = secrets.token_hex(16)
    return f'{token},{user},{uid},"{groups}"\n' if groups else f"{token},{user},{uid}\n"


def make_tokens(c: Layout) -> dict[str, str]:
    """The API server's static token file: kept as it is, completed with users added since
    it was written. Returns user -> token."""
    path = c.path("pki", "tokens.csv")
    existing = ""
    if os.path.exists(path):
        with open(path) as f:
            existing = f.read()
    tokens = {row[1]: row[0] for row in (line.split(",", 3) for line in existing.splitlines() if line)}
    missing = [_token_row(*user) for user in TOKEN_USERS if user[0] not in tokens]
    if missing:
        with open(path + ".tmp", "w") as f:
            f.write(existing + "".join(missing))
        os.chmod(path + ".tmp", 0o600)
        os.replace(path + ".tmp", path)
        return make_tokens(c)
    return tokens


def write_kubeconfig(path: str, server: str, ca_file: str, user: str, token: str, namespace: str = "default",
                     context: str = "segflow") -> str:
    """A kubeconfig for one bearer-token user (JSON, which kubectl and clients read as YAML)."""
    with open(ca_file, "rb") as f:
        ca = base64.b64encode(f.read()).decode()
    config = {
        "apiVersion": "v1", "kind": "Config", "current-context": context, "preferences": {},
        "clusters": [{"name": context, "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": context, "user": user, "namespace": namespace}}],
    }
    with open(path + ".tmp", "w") as f:
        json.dump(config, f, indent=1)
    os.chmod(path + ".tmp", 0o600)
    os.replace(path + ".tmp", path)
    return path
