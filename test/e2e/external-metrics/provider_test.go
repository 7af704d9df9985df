package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"

	"sigs.k8s.io/custom-metrics-apiserver/pkg/provider"
)

type fakeProm struct {
	queries []string
	samples []Sample
	err     error
}

func (f *fakeProm) Query(_ context.Context, q string) ([]Sample, error) {
	f.queries = append(f.queries, q)
	return f.samples, f.err
}

func mustSelector(t *testing.T, s string) labels.Selector {
	t.Helper()
	sel, err := labels.Parse(s)
	if err != nil {
		t.Fatalf("labels.Parse(%q): %v", s, err)
	}
	return sel
}

func TestSelectorNamesOneModelService(t *testing.T) {
	for s, want := range map[string]string{"modelservice=chat": "chat", "modelservice==chat": "chat", "modelservice in (chat)": "chat"} {
		got, err := ModelServiceFromSelector(mustSelector(t, s))
		if err != nil || got != want {
			t.Errorf("%q: got %q, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "modelservice!=chat", "modelservice in (a,b)", "modelservice=chat,x=y", "app=chat", "modelservice"} {
		if got, err := ModelServiceFromSelector(mustSelector(t, s)); err == nil {
			t.Errorf("%q accepted as %q", s, got)
		}
	}
}

func TestAnswersWithTheControllersQuery(t *testing.T) {
	ts := time.Unix(1700000000, 0).UTC()
	prom := &fakeProm{samples: []Sample{{Time: ts, Value: 23.0015}}}
	p := &QueueLengthProvider{Prometheus: prom, Template: DefaultQueryTemplate}
	list, err := p.GetExternalMetric(context.Background(), "prod", mustSelector(t, "modelservice=chat"),
		provider.ExternalMetricInfo{Metric: MetricName})
	if err != nil {
		t.Fatal(err)
	}
	if len(prom.queries) != 1 || prom.queries[0] != `sum(modelservice_queue_length{namespace="prod",modelservice="chat"})` {
		t.Fatalf("queries: %q", prom.queries)
	}
	if len(list.Items) != 1 {
		t.Fatalf("items: %+v", list.Items)
	}
	it := list.Items[0]
	if it.MetricName != MetricName || it.Value.MilliValue() != 23002 || !it.Timestamp.Time.Equal(ts) ||
		it.MetricLabels["namespace"] != "prod" || it.MetricLabels["modelservice"] != "chat" {
		t.Fatalf("item: %+v (value %s)", it, it.Value.String())
	}
}

func TestErrors(t *testing.T) {
	p := &QueueLengthProvider{Prometheus: &fakeProm{err: errors.New("connection refused")}, Template: DefaultQueryTemplate}
	ctx := context.Background()
	_, err := p.GetExternalMetric(ctx, "prod", mustSelector(t, "modelservice=chat"), provider.ExternalMetricInfo{Metric: MetricName})
	if !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Prometheus down: %v", err)
	}
	_, err = p.GetExternalMetric(ctx, "prod", mustSelector(t, "app=chat"), provider.ExternalMetricInfo{Metric: MetricName})
	if !apierrors.IsBadRequest(err) {
		t.Errorf("bad selector: %v", err)
	}
	_, err = p.GetExternalMetric(ctx, "prod", mustSelector(t, "modelservice=chat"), provider.ExternalMetricInfo{Metric: "other"})
	if !apierrors.IsNotFound(err) {
		t.Errorf("other metric: %v", err)
	}
	p.Prometheus = &fakeProm{samples: []Sample{{Value: 1e16}}}
	_, err = p.GetExternalMetric(ctx, "prod", mustSelector(t, "modelservice=chat"), provider.ExternalMetricInfo{Metric: MetricName})
	if !apierrors.IsServiceUnavailable(err) {
		t.Errorf("out of range value: %v", err)
	}
}
