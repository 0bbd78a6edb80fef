"""A real moto S3 server on loopback for the batch stage's tests (stopped by PID)."""

from support.servers import server_fixture, start_s3


s3_server = server_fixture("s3_server", start_s3, "moto S3 server")
