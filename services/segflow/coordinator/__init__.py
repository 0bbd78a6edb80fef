"""The coordinator service: one per job; tracks workers, ends or fails the job."""
