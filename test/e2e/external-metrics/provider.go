package main

import (
	"context"
	"fmt"
	"math"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/external_metrics"

	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

// MetricName is the one External metric this server serves.
const MetricName = "modelservice_queue_length"

// SelectorLabel is the metric selector's label that names the ModelService
// (the HPA's spec.metrics[].external.metric.selector: {matchLabels:
// {modelservice: NAME}}); the namespace is the HPA's.
const SelectorLabel = "modelservice"

// maxValue keeps value*1000 (a milli-quantity) inside int64.
const maxValue = 9e15

// Querier runs a PromQL instant query.
type Querier interface {
	Query(ctx context.Context, promql string) ([]Sample, error)
}

// QueueLengthProvider answers
// GET /apis/external.metrics.k8s.io/v1beta1/namespaces/NS/modelservice_queue_length?labelSelector=modelservice=NAME
// with the controller's query for NS/NAME (the query template with NS and
// NAME substituted), one item per series of Prometheus' answer.
type QueueLengthProvider struct {
	Prometheus Querier
	Template   string
}

var _ provider.ExternalMetricsProvider = (*QueueLengthProvider)(nil)

// ModelServiceFromSelector returns NAME from a selector that is exactly
// modelservice=NAME (=, == or "in" with one value); anything else cannot be
// put into the query template and is refused.
func ModelServiceFromSelector(sel labels.Selector) (string, error) {
	reqs, selectable := sel.Requirements()
	if !selectable || len(reqs) != 1 || reqs[0].Key() != SelectorLabel {
		return "", fmt.Errorf("the label selector must be exactly %s=NAME (the ModelService), got %q", SelectorLabel, sel.String())
	}
	switch reqs[0].Operator() {
	case selection.Equals, selection.DoubleEquals, selection.In:
	default:
		return "", fmt.Errorf("the label selector must be exactly %s=NAME (the ModelService), got %q", SelectorLabel, sel.String())
	}
	vals := reqs[0].Values().List()
	if len(vals) != 1 || vals[0] == "" {
		return "", fmt.Errorf("the label selector must name one ModelService, got %q", sel.String())
	}
	return vals[0], nil
}

func (p *QueueLengthProvider) GetExternalMetric(ctx context.Context, namespace string, sel labels.Selector,
	info provider.ExternalMetricInfo) (*external_metrics.ExternalMetricValueList, error) {
	if info.Metric != MetricName {
		return nil, provider.NewMetricNotFoundError(external_metrics.Resource("externalmetrics"), info.Metric)
	}
	if namespace == "" {
		return nil, apierrors.NewBadRequest(MetricName + " is namespaced: ask under /namespaces/NS/")
	}
	name, err := ModelServiceFromSelector(sel)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	q := RenderQuery(p.Template, namespace, name)
	samples, err := p.Prometheus.Query(ctx, q)
	if err != nil {
		klog.V(2).InfoS("query failed", "namespace", namespace, "modelservice", name, "query", q, "err", err)
		// 503: the metric exists but cannot be read now (the HPA reports it in
		// its ScalingActive condition and keeps the replica count).
		return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("%s for %s/%s: query %s: %v", MetricName, namespace, name, q, err))
	}
	for _, s := range samples {
		if math.Abs(s.Value) > maxValue {
			return nil, apierrors.NewServiceUnavailable(fmt.Sprintf("%s for %s/%s: value %g out of range", MetricName, namespace, name, s.Value))
		}
	}
	list := &external_metrics.ExternalMetricValueList{Items: make([]external_metrics.ExternalMetricValue, 0, len(samples))}
	for _, s := range samples {
		labels := s.Labels
		if len(labels) == 0 {
			// An aggregate (the default sum()) has no labels of its own: say
			// which ModelService it is for.
			labels = map[string]string{"namespace": namespace, SelectorLabel: name}
		}
		list.Items = append(list.Items, external_metrics.ExternalMetricValue{
			MetricName:   MetricName,
			MetricLabels: labels,
			Timestamp:    metav1.NewTime(s.Time),
			Value:        *resource.NewMilliQuantity(int64(math.Round(s.Value*1000)), resource.DecimalSI),
		})
	}
	klog.V(4).InfoS("answered", "namespace", namespace, "modelservice", name, "query", q, "series", len(samples))
	return list, nil
}

func (p *QueueLengthProvider) ListAllExternalMetrics() []provider.ExternalMetricInfo {
	return []provider.ExternalMetricInfo{{Metric: MetricName}}
}
