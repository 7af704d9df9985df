// Command kube-scheduler is the upstream Kubernetes scheduler, built from Go
// modules for the ModelService end-to-end tests (see
// test/e2e/build-control-plane.sh). It mirrors
// k8s.io/kubernetes/cmd/kube-scheduler/scheduler.go.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // for JSON log format registration
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version" // for version metric registration
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	command := app.NewSchedulerCommand()
	code := cli.Run(command)
	os.Exit(code)
}
