"""The local Kubernetes control plane of tests and demos (etcd, kube-apiserver,
kube-controller-manager and segflow's node agent); see scripts/cluster/up.sh."""
