"""Who may talk to a job: a per-job certificate authority, mutual TLS on every gRPC
channel, and the roles a peer's certificate grants."""
