// modelservice-external-metrics: a small External metrics API server
// (external.metrics.k8s.io/v1beta1) for the end-to-end suite, built on
// sigs.k8s.io/custom-metrics-apiserver, the library prometheus-adapter is
// built on. It serves one metric, modelservice_queue_length, for a namespace
// and a ModelService (label selector modelservice=NAME), read from Prometheus
// with the controller's query template (--prometheus-query, the same default
// and the same substitution rule), so that an HPA in mode HPA scales on the
// very number the controller's own autoscaler would use.
//
// It is an extension API server behind kube-aggregator: register it with an
// APIService (test/e2e/external-metrics/apiservice.yaml.in). Besides its own
// flags it takes the library's: --secure-port, --bind-address,
// --tls-cert-file, --tls-private-key-file, --authentication-kubeconfig,
// --authorization-kubeconfig, --lister-kubeconfig, ... (see --help).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"k8s.io/component-base/logs"
	"k8s.io/component-base/metrics/legacyregistry"
	"k8s.io/klog/v2"

	"sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver/metrics"
	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"
)

func main() {
	logs.InitLogs()
	defer logs.FlushLogs()

	a := &basecmd.AdapterBase{Name: "modelservice-external-metrics"}
	fs := a.Flags()
	promURL := fs.String("prometheus-url", "", "Prometheus base URL, http(s)://host[:port][/prefix] (required)")
	tmpl := fs.String("prometheus-query", DefaultQueryTemplate,
		"PromQL template for one ModelService, as the controller's --prometheus-query: the literals \"NS\" and \"NAME\" are replaced")
	timeout := fs.Duration("prometheus-timeout", 5*time.Second, "time limit of one Prometheus query")
	logs.AddFlags(fs)
	if err := fs.Parse(os.Args[1:]); err != nil {
		klog.Fatalf("flags: %v", err)
	}
	if *promURL == "" {
		klog.Fatalf("--prometheus-url is required")
	}
	prom, err := NewPrometheusClient(*promURL, *timeout)
	if err != nil {
		klog.Fatalf("%v", err)
	}
	a.WithExternalMetrics(&QueueLengthProvider{Prometheus: prom, Template: *tmpl})
	if err := metrics.RegisterMetrics(legacyregistry.Register); err != nil {
		klog.Fatalf("registering metrics: %v", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	klog.InfoS("serving external.metrics.k8s.io/v1beta1", "metric", MetricName, "prometheus", *promURL, "query", *tmpl)
	if err := a.Run(ctx); err != nil {
		klog.Fatalf("server: %v", err)
	}
}
