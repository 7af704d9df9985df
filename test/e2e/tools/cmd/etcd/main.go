// Command etcd is the upstream etcd server, built from Go modules for the
// ModelService end-to-end tests (see test/e2e/build-control-plane.sh).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
