"""Each checkpoint protocol as one object on each side: a replica side that a worker asks
for each replica's hooks, a coordinator side that the coordinator asks what to restore and
what a round or a lost worker changes. One module per family holds both sides; the
registry says which family each protocol is."""
