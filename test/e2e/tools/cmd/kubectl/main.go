// Command kubectl is the upstream kubectl, built from Go modules at the same
// version as our kube-apiserver (see test/e2e/build-control-plane.sh).
// It mirrors k8s.io/kubernetes/cmd/kubectl/kubectl.go.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// Import to initialize client auth plugins.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		// Pretty-print the error and exit with an error.
		util.CheckErr(err)
	}
}
