"""The coordinator service: one per job; tracks workers, ends or fails the job."""

ADDRESS_FROM_STDIN = "-"     # a worker started before its coordinator listened reads the address from stdin
