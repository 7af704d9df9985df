// health-check: what kstatus, Argo CD, Flux and `kubectl wait
// --for=condition=Ready` say of each ModelService fixture, against the
// verdicts the fixture expects (docs/user/status.md, "Health").
//
// Usage: health-check LUA EXPRS_YAML FIXTURE.json...
//
//   - kstatus: sigs.k8s.io/cli-utils' status.Compute itself.
//   - Argo CD: the Lua health check run with gopher-lua as Argo CD's
//     util/lua runs it (the libraries it opens, the object decoded as its
//     decodeValue does, the statuses it accepts), behind gitops-engine's
//     GetResourceHealth, which says Progressing "Pending deletion" first.
//   - Flux: the healthCheckExprs with cel-go in the environment and order of
//     Flux's runtime/cel StatusEvaluator (observedGeneration first, then
//     inProgress, failed, current, else InProgress; an error is Unknown).
//   - kubectl wait --for=condition=Ready: kubectl v0.34's checkCondition.
//
// Exit status 1 when any verdict differs from the fixture's.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/ext"
	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/yaml"
)

type fixture struct {
	Stage  string         `json:"stage"`
	Expect expect         `json:"expect"`
	Object map[string]any `json:"object"`
}

type expect struct {
	KStatus      string `json:"kstatus"`
	ArgoCD       string `json:"argocd"`
	Flux         string `json:"flux"`
	KubectlReady bool   `json:"kubectlWaitReady"`
}

type healthCheck struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	InProgress string `json:"inProgress"`
	Failed     string `json:"failed"`
	Current    string `json:"current"`
}

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: health-check LUA EXPRS_YAML FIXTURE.json...")
		os.Exit(2)
	}
	script, err := os.ReadFile(os.Args[1])
	check(err)
	exprsText, err := os.ReadFile(os.Args[2])
	check(err)
	var checks []healthCheck
	check(yaml.Unmarshal(exprsText, &checks))
	if len(checks) != 1 || checks[0].Kind != "ModelService" || !strings.HasPrefix(checks[0].APIVersion, "modelops.dev/") {
		check(fmt.Errorf("%s: want one health check, for modelops.dev ModelService", os.Args[2]))
	}
	flux := newFluxEvaluator(checks[0])
	failed := 0
	for _, path := range os.Args[3:] {
		raw, err := os.ReadFile(path)
		check(err)
		var f fixture
		if err := json.Unmarshal(raw, &f); err != nil {
			check(fmt.Errorf("%s: %w", path, err))
		}
		// As the API machinery decodes an object: integers as int64.
		u := &unstructured.Unstructured{}
		check(u.UnmarshalJSON(mustJSON(f.Object)))
		got := expect{
			KStatus:      kstatusVerdict(u),
			ArgoCD:       argoVerdict(string(script), u),
			Flux:         flux.verdict(u),
			KubectlReady: kubectlWaitReady(u),
		}
		verdict := "ok"
		if got != f.Expect {
			verdict = fmt.Sprintf("WRONG: want %+v", f.Expect)
			failed++
		}
		fmt.Printf("%-28s kstatus=%-11s argocd=%-11s flux=%-10s kubectl-wait-ready=%-5v %s\n",
			filepath.Base(path), got.KStatus, got.ArgoCD, got.Flux, got.KubectlReady, verdict)
	}
	if failed > 0 {
		fmt.Printf("%d of %d fixtures judged otherwise than expected\n", failed, len(os.Args)-3)
		os.Exit(1)
	}
	fmt.Printf("%d fixtures: every tool's verdict as expected\n", len(os.Args)-3)
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "health-check:", err)
		os.Exit(2)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	check(err)
	return b
}

func kstatusVerdict(u *unstructured.Unstructured) string {
	res, err := status.Compute(u)
	if err != nil {
		return "Error"
	}
	return string(res.Status)
}

// Argo CD's GetResourceHealth (gitops-engine pkg/health) around its Lua VM
// (util/lua lua.go: runLua, ExecuteHealthLua, decodeValue).
func argoVerdict(script string, u *unstructured.Unstructured) string {
	if u.GetDeletionTimestamp() != nil {
		return "Progressing"
	}
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for _, pair := range []struct {
		n string
		f lua.LGFunction
	}{{lua.LoadLibName, lua.OpenPackage}, {lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}} {
		check(l.CallByParam(lua.P{Fn: l.NewFunction(pair.f), NRet: 0, Protect: true}, lua.LString(pair.n)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1e9)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", decodeValue(l, u.Object))
	if err := l.DoString(script); err != nil {
		return "Unknown"
	}
	ret := l.Get(-1)
	tbl, ok := ret.(*lua.LTable)
	if !ok {
		return "Unknown"
	}
	switch s := tbl.RawGetString("status").String(); s {
	case "Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown":
		return s
	}
	return "Unknown"
}

func decodeValue(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case bool:
		return lua.LBool(v)
	case float64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case int:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(decodeValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), decodeValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}

type fluxEvaluator struct{ inProgress, failed, current cel.Program }

// The environment of Flux's runtime/cel NewExpression (parsed, not compiled).
func newFluxEvaluator(h healthCheck) fluxEvaluator {
	env, err := cel.NewEnv(cel.HomogeneousAggregateLiterals(), cel.EagerlyValidateDeclarations(true),
		cel.DefaultUTCTimeZone(true), cel.CrossTypeNumericComparisons(true), cel.OptionalTypes(),
		ext.Strings(), ext.Sets(), ext.Encoders())
	check(err)
	program := func(expr string) cel.Program {
		if expr == "" {
			return nil
		}
		ast, issues := env.Parse(expr)
		if issues != nil && issues.Err() != nil {
			check(fmt.Errorf("CEL %q: %w", expr, issues.Err()))
		}
		p, err := env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.InterruptCheckFrequency(100))
		check(err)
		return p
	}
	return fluxEvaluator{program(h.InProgress), program(h.Failed), program(h.Current)}
}

// Flux's StatusEvaluator.Evaluate; an evaluation error is what Flux's
// status reader reports as Unknown (it keeps waiting).
func (f fluxEvaluator) verdict(u *unstructured.Unstructured) string {
	obj := u.UnstructuredContent()
	if og, ok, err := unstructured.NestedInt64(obj, "status", "observedGeneration"); err == nil && ok {
		if g, ok, err := unstructured.NestedInt64(obj, "metadata", "generation"); err == nil && ok && og != g {
			return "InProgress"
		}
	}
	for _, e := range []struct {
		p      cel.Program
		status string
	}{{f.inProgress, "InProgress"}, {f.failed, "Failed"}, {f.current, "Current"}} {
		if e.p == nil {
			continue
		}
		val, _, err := e.p.ContextEval(context.Background(), obj)
		if err != nil {
			return "Unknown"
		}
		if b, ok := val.(types.Bool); !ok {
			return "Unknown"
		} else if b {
			return e.status
		}
	}
	return "InProgress"
}

// kubectl v0.34 pkg/cmd/wait condition.go checkCondition, for Ready=True.
func kubectlWaitReady(u *unstructured.Unstructured) bool {
	conditions, found, err := unstructured.NestedSlice(u.Object, "status", "conditions")
	if err != nil || !found {
		return false
	}
	for _, item := range conditions {
		c, _ := item.(map[string]any)
		name, found, err := unstructured.NestedString(c, "type")
		if !found || err != nil || !strings.EqualFold(name, "Ready") {
			continue
		}
		st, found, err := unstructured.NestedString(c, "status")
		if !found || err != nil {
			continue
		}
		if generation, found, _ := unstructured.NestedInt64(u.Object, "metadata", "generation"); found {
			og, found, _ := unstructured.NestedInt64(c, "observedGeneration")
			if !found {
				og, found, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
			}
			if found && og < generation {
				return false
			}
		}
		return strings.EqualFold(st, "True")
	}
	return false
}
