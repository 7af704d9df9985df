package main

import (
	"strconv"
	"strings"
	"testing"
)

// The cases of test/controller/autoscale/promql_test.cc: the server must ask
// Prometheus exactly what the controller asks.

func TestDefaultTemplate(t *testing.T) {
	got := RenderQuery(DefaultQueryTemplate, "prod", "bert-qa")
	if want := `sum(modelservice_queue_length{namespace="prod",modelservice="bert-qa"})`; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestQuoteBasics(t *testing.T) {
	for in, want := range map[string]string{
		"":           `""`,
		"abc-1.2":    `"abc-1.2"`,
		`a"b`:        `"a\"b"`,
		`a\b`:        `"a\\b"`,
		"a\nb\rc\td": `"a\nb\rc\td"`,
		"a\x00b":     `"a\x00b"`,
		"\x7f\x01":   `"\x7f\x01"`,
		"\xc3\xa9":   `"\xc3\xa9"`,
		"'`":         "\"'`\"",
	} {
		if got := QuotePromQLString(in); got != want {
			t.Errorf("QuotePromQLString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestHostileNameCannotBreakOut(t *testing.T) {
	hostile := []string{"x\"}) or vector(1000) #", "x\\\"} or up{a=\"", "a\\", "\\\\\"", "n}\nor vector(9)",
		"\"", "}", "nul\x00byte", "name\r\n\t\"\\}{)(#"}
	for _, ns := range []string{"default", "ns\"}\\\n"} {
		for _, name := range hostile {
			q := RenderQuery(DefaultQueryTemplate, ns, name)
			// Cut the two literals out: what is left is the template's skeleton,
			// and each literal decodes (Go and PromQL share the escapes) to the value.
			const head = "sum(modelservice_queue_length{namespace="
			if !strings.HasPrefix(q, head) || !strings.HasSuffix(q, "})") || strings.Contains(q, "\n") {
				t.Fatalf("unexpected shape: %s", q)
			}
			rest := q[len(head) : len(q)-2]
			nsLit, err := strconv.QuotedPrefix(rest)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			rest = rest[len(nsLit):]
			if !strings.HasPrefix(rest, ",modelservice=") {
				t.Fatalf("unexpected shape after the namespace: %s", q)
			}
			nameLit := rest[len(",modelservice="):]
			gotNS, err1 := strconv.Unquote(nsLit)
			gotName, err2 := strconv.Unquote(nameLit)
			if err1 != nil || err2 != nil || gotNS != ns || gotName != name {
				t.Fatalf("%s: literals decode to %q/%q (%v %v), want %q/%q", q, gotNS, gotName, err1, err2, ns, name)
			}
		}
	}
}

func TestOnlyWholeLiteralsAreSubstituted(t *testing.T) {
	for _, c := range []struct{ tmpl, name, want string }{
		{`NAME_total{a="NS-x",b="my NAME",c="ns",d="NS"} # "NAME"`, "q", `NAME_total{a="NS-x",b="my NAME",c="ns",d="p"} # "NAME"`},
		{"sum(x{n=NAME})", "q", "sum(x{n=NAME})"},
		{"x{a='NS',b=`NAME`}", `q"`, `x{a="p",b="q\""}`},
		{`a{l="\"NS\"",m="NS"} / b{m="NS",n="NAME"}`, "q", `a{l="\"NS\"",m="p"} / b{m="p",n="q"}`},
		{"# \"NS\"\nx{a=\"NS\"}", "q", "# \"NS\"\nx{a=\"p\"}"},
		{`x{a="NS",b="NAME)`, "q", `x{a="p",b="NAME)`},
		{"vector(3)", "q", "vector(3)"},
	} {
		if got := RenderQuery(c.tmpl, "p", c.name); got != c.want {
			t.Errorf("RenderQuery(%s) = %s, want %s", c.tmpl, got, c.want)
		}
	}
}

func TestRegexMatchersGetRegexQuoting(t *testing.T) {
	if got, want := QuoteRegex(`a.b+c*?()|[]{}^$\z`), `a\.b\+c\*\?\(\)\|\[\]\{\}\^\$\\z`; got != want {
		t.Errorf("QuoteRegex = %s, want %s", got, want)
	}
	got := RenderQuery(`x{namespace=~"NS",name!~ "NAME",o="NAME"}`, "a.b", "c.d")
	if want := `x{namespace=~"a\\.b",name!~ "c\\.d",o="c.d"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
