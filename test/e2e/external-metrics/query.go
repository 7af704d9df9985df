package main

import "strings"

// DefaultQueryTemplate is the controller's default --prometheus-query
// (controller/autoscale/promql.h, design.md §3).
const DefaultQueryTemplate = `sum(modelservice_queue_length{namespace="NS",modelservice="NAME"})`

// RenderQuery applies the controller's substitution rule
// (controller/autoscale/promql.h; this is a Go copy of promql.cc, and
// query_test.go holds the same cases as test/controller/autoscale/promql_test.cc):
// a PromQL string literal ("...", '...' or `...`) whose whole content is NS or
// NAME becomes a double-quoted literal holding the namespace or the name, and
// regex-escaped first when it follows =~ or !~. Comments (# to the end of the
// line) and every other literal are copied as written.
func RenderQuery(tmpl, ns, name string) string {
	var out strings.Builder
	out.Grow(len(tmpl) + len(ns) + len(name) + 8)
	for i := 0; i < len(tmpl); {
		c := tmpl[i]
		if c == '#' {
			eol := strings.IndexByte(tmpl[i:], '\n')
			if eol < 0 {
				eol = len(tmpl) - i
			}
			out.WriteString(tmpl[i : i+eol])
			i += eol
			continue
		}
		if c != '"' && c != '\'' && c != '`' {
			out.WriteByte(c)
			i++
			continue
		}
		j, closed := i+1, false
		for j < len(tmpl) {
			if c != '`' && tmpl[j] == '\\' {
				j += 2
				continue
			}
			if tmpl[j] == c {
				closed = true
				break
			}
			j++
		}
		if !closed {
			out.WriteString(tmpl[i:])
			break
		}
		content := tmpl[i+1 : j]
		var value *string
		switch content {
		case "NS":
			value = &ns
		case "NAME":
			value = &name
		}
		switch {
		case value == nil:
			out.WriteString(tmpl[i : j+1])
		case afterRegexMatcher(out.String()):
			out.WriteString(QuotePromQLString(QuoteRegex(*value)))
		default:
			out.WriteString(QuotePromQLString(*value))
		}
		i = j + 1
	}
	return out.String()
}

func afterRegexMatcher(s string) bool {
	t := strings.TrimRight(s, " \t\r\n")
	return len(t) >= 2 && t[len(t)-1] == '~' && (t[len(t)-2] == '=' || t[len(t)-2] == '!')
}

// QuotePromQLString returns v as a PromQL double-quoted literal whose bytes
// are all printable ASCII (the controller's QuotePromQLString).
func QuotePromQLString(v string) string {
	const hex = "0123456789abcdef"
	var out strings.Builder
	out.Grow(len(v) + 2)
	out.WriteByte('"')
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch c {
		case '\\':
			out.WriteString(`\\`)
		case '"':
			out.WriteString(`\"`)
		case '\n':
			out.WriteString(`\n`)
		case '\r':
			out.WriteString(`\r`)
		case '\t':
			out.WriteString(`\t`)
		default:
			if c < 0x20 || c >= 0x7f {
				out.WriteString(`\x`)
				out.WriteByte(hex[c>>4])
				out.WriteByte(hex[c&0xf])
			} else {
				out.WriteByte(c)
			}
		}
	}
	out.WriteByte('"')
	return out.String()
}

// QuoteRegex escapes the RE2 metacharacters \.+*?()|[]{}^$ with a backslash.
func QuoteRegex(v string) string {
	var out strings.Builder
	for i := 0; i < len(v); i++ {
		if strings.IndexByte(`\.+*?()|[]{}^$`, v[i]) >= 0 {
			out.WriteByte('\\')
		}
		out.WriteByte(v[i])
	}
	return out.String()
}
