// Package deploy holds no code: its tests prove the packaging files of the
// repository (Dockerfile, Kubernetes manifests, the Helm chart, the
// docker-compose stack and the systemd unit) with the real tools (buildah,
// helm, kubeconform, promtool, docker-compose, systemd-analyze).
//
// deploy/prometheus/ (rules, Prometheus configuration) has its own tests.
package deploy
