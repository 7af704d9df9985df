package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestParseVectorScalarAndErrors(t *testing.T) {
	ok := func(body string) []Sample {
		t.Helper()
		s, err := ParseQueryResponse(200, []byte(body))
		if err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		return s
	}
	s := ok(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1700000000.5,"23"]}]}}`)
	if len(s) != 1 || s[0].Value != 23 || !s[0].Time.Equal(time.Unix(1700000000, 500000000)) {
		t.Fatalf("vector: %+v", s)
	}
	s = ok(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"pod":"a"},"value":[1,"1.5"]},{"metric":{"pod":"b"},"value":[1,"1e3"]}]}}`)
	if len(s) != 2 || s[0].Labels["pod"] != "a" || s[0].Value != 1.5 || s[1].Value != 1000 {
		t.Fatalf("two series: %+v", s)
	}
	s = ok(`{"status":"success","data":{"resultType":"scalar","result":[1,"-2"]}}`)
	if len(s) != 1 || s[0].Value != -2 {
		t.Fatalf("scalar: %+v", s)
	}

	for _, c := range []struct {
		code       int
		body, want string
	}{
		{200, `{"status":"success","data":{"resultType":"vector","result":[]}}`, "no series"},
		{200, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"NaN"]}]}}`, "is NaN"},
		{200, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"+Inf"]}]}}`, "infinite"},
		{200, `{"status":"success","data":{"resultType":"matrix","result":[]}}`, `unsupported resultType "matrix"`},
		{400, `{"status":"error","errorType":"bad_data","error":"parse error at char 4"}`, "bad_data: parse error at char 4"},
		{503, `upstream down`, "HTTP 503: upstream down"},
		{200, `not json`, "malformed answer"},
		{200, `{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1]}]}}`, "malformed series"},
	} {
		_, err := ParseQueryResponse(c.code, []byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d %s: got error %v, want one containing %q", c.code, c.body, err, c.want)
		}
	}
}

func TestQueryIsSentEncoded(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/prefix/api/v1/query" {
			http.NotFound(w, r)
			return
		}
		got = r.URL.Query().Get("query")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,"7"]}]}}`))
	}))
	defer srv.Close()
	p, err := NewPrometheusClient(srv.URL+"/prefix/", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	q := `sum(modelservice_queue_length{namespace="a&b",modelservice="c d+e"})`
	s, err := p.Query(context.Background(), q)
	if err != nil || len(s) != 1 || s[0].Value != 7 {
		t.Fatalf("Query: %+v %v", s, err)
	}
	if got != q {
		t.Fatalf("Prometheus received %q, want %q", got, q)
	}
	if _, err := NewPrometheusClient("localhost:9090", time.Second); err == nil {
		t.Fatal("a URL without scheme was accepted")
	}
}
