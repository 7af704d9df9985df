// Command kubelet is the upstream Kubernetes node agent, built from Go modules
// for the ModelService end-to-end tests' real node (test/e2e/cluster.sh
// --real-node; see test/e2e/build-control-plane.sh). It mirrors
// k8s.io/kubernetes/cmd/kubelet/kubelet.go.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // for client metric registration
	_ "k8s.io/component-base/metrics/prometheus/version"  // for version metric registration
	"k8s.io/kubernetes/cmd/kubelet/app"
)

func main() {
	command := app.NewKubeletCommand(context.Background())
	code := cli.Run(command)
	os.Exit(code)
}
