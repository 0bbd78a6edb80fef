"""A real moto S3 server on loopback for the lease tests (stopped by PID at the end)."""

from support.servers import server_fixture, start_s3


s3_server = server_fixture("s3_server", start_s3, "moto S3 server", scope="session")
