"""The generated pages of segflow's documentation: the command line, the StreamJob
resource, the Helm values, the metrics, the benchmarks and the changelog.

Each page is written from what defines it (the argument parser, the CRD's schema,
values.yaml, the Prometheus registries, the bench results files, CHANGELOG.md) by a pure
function of that input, so the reference cannot drift from the code unnoticed:
``python -m segflow.reference --check`` (and tests/docs/test_reference.py) regenerates
every page and compares it with the committed one, ``--write`` rewrites them.
"""
