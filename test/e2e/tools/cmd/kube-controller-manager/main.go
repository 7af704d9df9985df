// Command kube-controller-manager is the upstream Kubernetes controller
// manager (Deployment, ReplicaSet, garbage collector, namespace, EndpointSlice,
// service-account token controllers, ...), built from Go modules for the
// ModelService end-to-end tests (see test/e2e/build-control-plane.sh).
// It mirrors k8s.io/kubernetes/cmd/kube-controller-manager/controller-manager.go.
package main

import (
	"os"
	_ "time/tzdata" // for CronJob Time Zone support

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // load all the prometheus client-go plugin
	_ "k8s.io/component-base/metrics/prometheus/version"  // for version metric registration
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	command := app.NewControllerManagerCommand()
	code := cli.Run(command)
	os.Exit(code)
}
