"""A job's certificate authority and the certificates it issues.

Each job run (a local ``segflow run``, or one deployment revision on Kubernetes) gets a
fresh CA, so a certificate of another job, or of an earlier revision of the same job,
does not even complete a TLS handshake. A certificate names its holder (subject common
name: ``coordinator``, ``w3``, ``client``) and its role as a DNS name
(``<role>.segflow.internal``): the server side reads the role to decide what a caller may
do, and clients dial with that name as the expected host, so a worker cannot pose as the
coordinator.
"""
from __future__ import annotations

import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .identities import Identity, Role

VALIDITY = datetime.timedelta(days=366)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


class Authority:
    """A job's CA: issues the identities of its coordinator, workers and clients."""

    def __init__(self, key: ec.EllipticCurvePrivateKey, cert: x509.Certificate):
        self.key = key
        self.cert = cert

    @classmethod
    def create(cls, job: str) -> Authority:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"segflow job CA {job}"[:64])])
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
                .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                             data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                             crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
                .sign(key, hashes.SHA256()))
        return cls(key, cert)

    @property
    def ca_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, role: Role, name: str) -> Identity:
        """A key pair for ``name`` acting as ``role``, good as TLS server and client."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        cert = (x509.CertificateBuilder()
                .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
                .issuer_name(self.cert.subject).public_key(key.public_key())
                .serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + VALIDITY)
                .add_extension(x509.SubjectAlternativeName([x509.DNSName(role.host)]), critical=False)
                .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
                .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                      ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
                .sign(self.key, hashes.SHA256()))
        return Identity(self.ca_pem, cert.public_bytes(serialization.Encoding.PEM), _pem_key(key))
