"""Datacenter-disaster recovery: the lease in the segment-backup store that says which
cluster runs a job, and the fence that keeps every other cluster from committing."""
