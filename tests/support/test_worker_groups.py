"""make test's worker groups: the tests of a shared server are in its group, others in
none, and a test that uses a shared server's fixture outside its group is named."""
from support.worker_groups import group_of, misplaced


def test_the_cluster_and_spark_tests_have_their_groups_and_the_others_none():
    assert group_of("tests/k8s/test_chart.py::test_helm_lint_is_clean") == "kubernetes"
    assert group_of("tests/disaster/test_failover.py::test_a[east]") == "kubernetes"
    assert group_of("tests/spark/test_spark_sources.py::test_b") == "spark"
    assert group_of("tests/images/test_containers.py::test_e[engine]") == "images"
    assert group_of("tests/images/test_cluster_pods.py::test_g") == "kubernetes"
    assert group_of("tests/disaster/test_lease.py::test_c") is None
    assert group_of("tests/engine/test_joins.py::test_d") is None


def test_a_shared_fixture_outside_its_group_is_named():
    assert misplaced("tests/k8s/test_cluster.py::test_a", ["tmp_path", "cluster", "api_client"]) == []
    [problem] = misplaced("tests/engine/test_x.py::test_b", ["tmp_path", "spark"])
    assert "tests/engine/test_x.py::test_b uses 'spark'" in problem and "'spark' group" in problem
    assert len(misplaced("tests/spark/test_y.py::test_c", ["sites", "spark"])) == 1
