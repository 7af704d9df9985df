package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Sample is one series of an instant query's answer.
type Sample struct {
	Labels map[string]string
	Time   time.Time
	Value  float64
}

// PrometheusClient runs instant queries (GET /api/v1/query) against one
// Prometheus, reading answers by the controller's rules
// (controller/autoscale/prometheus_client.h): a scalar is one sample; a
// vector is one sample per series (the HPA adds them up, as the controller
// does); an empty vector, a NaN or infinite value, a matrix or string
// result, an error status or a non-2xx answer are errors.
type PrometheusClient struct {
	base   string // without trailing '/'
	client *http.Client
}

func NewPrometheusClient(baseURL string, timeout time.Duration) (*PrometheusClient, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("--prometheus-url must be http(s)://host[:port][/prefix], got %q", baseURL)
	}
	return &PrometheusClient{base: strings.TrimRight(baseURL, "/"), client: &http.Client{Timeout: timeout}}, nil
}

const maxResponseBytes = 8 << 20

func (p *PrometheusClient) Query(ctx context.Context, promql string) ([]Sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet,
		p.base+"/api/v1/query?query="+url.QueryEscape(promql), nil)
	if err != nil {
		return nil, err
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxResponseBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", maxResponseBytes)
	}
	return ParseQueryResponse(resp.StatusCode, body)
}

type apiResponse struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      *struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// ParseQueryResponse reads one /api/v1/query answer.
func ParseQueryResponse(code int, body []byte) ([]Sample, error) {
	var r apiResponse
	jsonErr := json.Unmarshal(body, &r)
	if jsonErr == nil && r.Status == "error" {
		t, e := r.ErrorType, r.Error
		if t == "" {
			t = "error"
		}
		if e == "" {
			e = "(no message)"
		}
		return nil, fmt.Errorf("%s: %s", t, e)
	}
	if code < 200 || code > 299 {
		return nil, fmt.Errorf("HTTP %d: %s", code, snippet(body))
	}
	if jsonErr != nil {
		return nil, fmt.Errorf("malformed answer: %v", jsonErr)
	}
	if r.Status != "success" || r.Data == nil {
		return nil, fmt.Errorf("malformed answer: status %q", r.Status)
	}
	switch r.Data.ResultType {
	case "scalar":
		var pair []json.RawMessage
		if err := json.Unmarshal(r.Data.Result, &pair); err != nil {
			return nil, fmt.Errorf("malformed scalar result: %v", err)
		}
		s, err := parsePair(pair, "scalar")
		if err != nil {
			return nil, err
		}
		return []Sample{s}, nil
	case "vector":
		var series []struct {
			Metric map[string]string `json:"metric"`
			Value  []json.RawMessage `json:"value"`
		}
		if err := json.Unmarshal(r.Data.Result, &series); err != nil {
			return nil, fmt.Errorf("malformed vector result: %v", err)
		}
		if len(series) == 0 {
			return nil, fmt.Errorf("no series (the query returned an empty vector)")
		}
		out := make([]Sample, 0, len(series))
		for _, s := range series {
			smp, err := parsePair(s.Value, "series "+labelString(s.Metric))
			if err != nil {
				return nil, err
			}
			smp.Labels = s.Metric
			out = append(out, smp)
		}
		return out, nil
	default:
		return nil, fmt.Errorf("unsupported resultType %q (the query must return a vector or a scalar)", r.Data.ResultType)
	}
}

// parsePair reads [ <unix seconds>, "<value>" ].
func parsePair(pair []json.RawMessage, what string) (Sample, error) {
	if len(pair) != 2 {
		return Sample{}, fmt.Errorf("malformed %s value", what)
	}
	var ts float64
	var v string
	if json.Unmarshal(pair[0], &ts) != nil || json.Unmarshal(pair[1], &v) != nil {
		return Sample{}, fmt.Errorf("malformed %s value", what)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("%s: value %q is not a number", what, v)
	}
	if math.IsNaN(f) {
		return Sample{}, fmt.Errorf("%s is NaN", what)
	}
	if math.IsInf(f, 0) {
		return Sample{}, fmt.Errorf("%s is infinite", what)
	}
	sec, frac := math.Modf(ts)
	return Sample{Time: time.Unix(int64(sec), int64(frac*1e9)).UTC(), Value: f}, nil
}

func labelString(m map[string]string) string {
	if len(m) == 0 {
		return "{}"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.Quote(m[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}
