"""Starting a job's services as local processes (the local distributed mode)."""
