// upstream-allocator translates the table-driven test suite of the DRA structured allocator
// (k8s.io/dynamic-resource-allocation, structured/internal/allocatortesting) of one tag into
// JSON fixtures that railfit's test runner (test/unit/alloc/test_upstream.c) replays against
// its allocator mirror. Run by hand, like a code generator, when a new upstream tag appears:
//
//	go run ./tools/upstream-allocator -repo <bare git dir of dynamic-resource-allocation> \
//	    -tag v0.35.6 -out test/data/upstream-allocator
//
// It writes <out>/<tag>/cases.json (one fixture per case: the objects, the features, the
// expected results or error, and the case's name and line), <out>/<tag>/untranslated.json (the
// cases it cannot express, each with the reason) and copies the Go files it read next to them,
// so that the test can count the cases in the source itself.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

const testDir = "structured/internal/allocatortesting/"

var sourceFiles = []string{"allocator_testing.go", "lexicographical_testing.go"}

type fixture struct {
	Case     string         `json:"case"`
	Source   string         `json:"source"`
	Line     int            `json:"line"`
	Features []string       `json:"features"`
	Node     any            `json:"node"`
	Classes  []any          `json:"classes"`
	Slices   []any          `json:"slices"`
	Claims   []any          `json:"claims"`
	Alloc    []any          `json:"allocatedDevices"`
	Shared   []any          `json:"allocatedSharedDevices"`
	Capacity []any          `json:"allocatedCapacity"`
	Expect   map[string]any `json:"expect"`
	NumOne   int64          `json:"expectNumAllocateOneInvocations,omitempty"`
}

type skipped struct {
	Case   string `json:"case"`
	Source string `json:"source"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

func main() {
	repo := flag.String("repo", "", "bare git directory of kubernetes/dynamic-resource-allocation")
	tag := flag.String("tag", "", "tag to translate, e.g. v0.35.6")
	out := flag.String("out", "test/data/upstream-allocator", "output directory")
	flag.Parse()
	if *repo == "" || *tag == "" {
		fmt.Fprintln(os.Stderr, "usage: upstream-allocator -repo DIR -tag vX.Y.Z [-out DIR]")
		os.Exit(2)
	}
	dir := filepath.Join(*out, *tag)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var names []string
	srcs := map[string]string{}
	for _, f := range sourceFiles {
		src, err := exec.Command("git", "-C", *repo, "show", *tag+":"+testDir+f).Output()
		if err != nil {
			continue // lexicographical_testing.go exists from v0.36 on
		}
		af, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			fatal(err)
		}
		files = append(files, af)
		names = append(names, f)
		srcs[f] = string(src)
		if err := os.WriteFile(filepath.Join(dir, f+".txt"), src, 0o644); err != nil {
			fatal(err)
		}
	}
	if len(files) == 0 {
		fatal(fmt.Errorf("%s has no %s", *tag, testDir))
	}
	in := newInterp(fset, files)
	defaultNode := strings.Contains(srcs["allocator_testing.go"], "tc.node = node(node1, region1)")
	var fixtures []fixture
	var skips []skipped
	total := 0
	for i, af := range files {
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || !strings.HasPrefix(fd.Name.Name, "Test") {
				continue
			}
			fx, sk, n := translateFunc(in, fset, fd, names[i], defaultNode)
			fixtures = append(fixtures, fx...)
			skips = append(skips, sk...)
			total += n
		}
	}
	sort.Slice(fixtures, func(i, j int) bool { return fixtures[i].Case < fixtures[j].Case })
	sort.Slice(skips, func(i, j int) bool { return skips[i].Case < skips[j].Case })
	if skips == nil {
		skips = []skipped{}
	}
	writeJSON(filepath.Join(dir, "cases.json"), *tag, map[string]any{"sources": names}, "cases", fixtures)
	writeJSON(filepath.Join(dir, "untranslated.json"), *tag, map[string]any{"sources": names}, "cases", skips)
	fmt.Printf("%s: %d cases, %d fixtures, %d untranslated\n", *tag, total, len(fixtures), len(skips))
	for _, s := range skips {
		fmt.Printf("  untranslated %s: %s\n", s.Case, s.Reason)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "upstream-allocator:", err)
	os.Exit(1)
}

// writeJSON writes {"tag":..., <key>: [one element per line]}: small enough to commit, and
// a diff between two translations shows the cases that changed.
func writeJSON(path, tag string, extra map[string]any, key string, elems any) {
	var b strings.Builder
	head, err := json.Marshal(map[string]any{"tag": tag})
	if err != nil {
		fatal(err)
	}
	b.WriteString(strings.TrimSuffix(string(head), "}"))
	for _, k := range sortedKeys(extra) {
		v, err := json.Marshal(extra[k])
		if err != nil {
			fatal(err)
		}
		fmt.Fprintf(&b, ",%q:%s", k, v)
	}
	fmt.Fprintf(&b, ",%q:[", key)
	raw, err := json.Marshal(elems)
	if err != nil {
		fatal(err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		fatal(err)
	}
	for i, it := range items {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
		b.Write(it)
	}
	b.WriteString("\n]}\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fatal(err)
	}
}

func sortedKeys(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

// translateFunc runs the statements of a Test function up to its `testcases :=` table, then
// evaluates each case on its own (an error in one case does not affect the others).
func translateFunc(in *Interp, fset *token.FileSet, fd *ast.FuncDecl, file string, defaultNode bool) ([]fixture, []skipped, int) {
	env := newEnv(in.genv)
	var table *ast.CompositeLit
	for _, s := range fd.Body.List {
		if as, ok := s.(*ast.AssignStmt); ok && len(as.Lhs) == 1 {
			if id, ok := as.Lhs[0].(*ast.Ident); ok && id.Name == "testcases" {
				table = as.Rhs[0].(*ast.CompositeLit)
				break
			}
		}
		in.stmt(s, env)
	}
	if table == nil {
		return nil, nil, 0
	}
	var fxs []fixture
	var sks []skipped
	for _, el := range table.Elts {
		kv := el.(*ast.KeyValueExpr)
		name := in.eval(kv.Key, env, nil).(string)
		line := fset.Position(kv.Key.Pos()).Line
		fx, err := translateCase(in, env, kv.Value, defaultNode)
		if err != "" {
			sks = append(sks, skipped{Case: name, Source: file, Line: line, Reason: err})
			continue
		}
		fx.Case, fx.Source, fx.Line = name, file, line
		fxs = append(fxs, *fx)
	}
	return fxs, sks, len(table.Elts)
}

func translateCase(in *Interp, env *Env, e ast.Expr, defaultNode bool) (fx *fixture, errMsg string) {
	defer func() {
		if r := recover(); r != nil {
			if ee, ok := r.(evalError); ok {
				fx, errMsg = nil, ee.msg
				return
			}
			// a Go construct the interpreter does not model fails this case only
			fx, errMsg = nil, fmt.Sprintf("translator cannot evaluate: %v", r)
		}
	}()
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, "case is not a composite literal"
	}
	tc := in.composite(lit, &ast.Ident{Name: "testcase"}, env)
	s := tc.(*Struct)
	fx = &fixture{Features: []string{}, Classes: []any{}, Slices: []any{}, Claims: []any{},
		Alloc: []any{}, Shared: []any{}, Capacity: []any{}}
	for _, k := range s.Keys {
		v := s.F[k]
		switch k {
		case "features":
			if f, ok := deref(v).(*Struct); ok {
				for _, fk := range f.Keys {
					if b, ok := f.F[fk].(bool); ok && b {
						fx.Features = append(fx.Features, fk)
					} else if !ok {
						fail("feature %s is not a bool", fk)
					}
				}
			}
		case "claimsToAllocate":
			for _, c := range list(v) {
				fx.Claims = append(fx.Claims, in.object(c, "ResourceClaim", "resource.k8s.io/v1"))
			}
		case "classes":
			for _, c := range list(v) {
				fx.Classes = append(fx.Classes, in.object(c, "DeviceClass", "resource.k8s.io/v1"))
			}
		case "slices":
			for _, c := range list(v) {
				fx.Slices = append(fx.Slices, in.object(c, "ResourceSlice", "resource.k8s.io/v1"))
			}
		case "node":
			if v != nil {
				fx.Node = in.object(v, "Node", "v1")
			}
		case "allocatedDevices":
			for _, c := range list(v) {
				fx.Alloc = append(fx.Alloc, deviceID(c))
			}
		case "allocatedSharedDeviceIDs":
			for _, c := range list(v) {
				fx.Shared = append(fx.Shared, deviceID(c))
			}
		case "allocatedCapacityDevices":
			m, _ := deref(v).(*Map)
			if v != nil && m == nil {
				fail("allocatedCapacityDevices is a %s", typeOf(v))
			}
			if m != nil {
				for _, key := range m.Keys {
					id := deviceID(key)
					id["consumedCapacity"] = in.toJSON(m.M[mapKey(key)])
					fx.Capacity = append(fx.Capacity, id)
				}
			}
		case "expectResults":
			var claims []any
			for _, r := range list(v) {
				claims = append(claims, in.expectedClaim(r))
			}
			if len(claims) > 0 {
				fx.Expect = map[string]any{"outcome": "allocated", "claims": claims}
			}
		case "expectError":
			m, ok := v.(*Matcher)
			if !ok {
				fail("expectError is a %s", typeOf(v))
			}
			fx.Expect = map[string]any{"outcome": "error", "error": errorSubstring(m)}
		case "expectNumAllocateOneInvocations":
			fx.NumOne = v.(int64)
		case "expectNumAllocateOneInvocationsByChannel":
			// statistics of upstream's implementations, not an outcome
		default:
			fail("unknown test case field %s", k)
		}
	}
	if _, both := s.F["expectError"]; both {
		if _, res := s.F["expectResults"]; res && len(list(s.F["expectResults"])) > 0 {
			fail("case expects both an error and results")
		}
	}
	if fx.Expect == nil {
		fx.Expect = map[string]any{"outcome": "unallocatable"}
	}
	if fx.Node == nil && defaultNode {
		fx.Node = in.object(in.eval(&ast.CallExpr{Fun: &ast.Ident{Name: "node"},
			Args: []ast.Expr{&ast.Ident{Name: "node1"}, &ast.Ident{Name: "region1"}}}, env, nil), "Node", "v1")
	}
	return fx, ""
}

func list(v any) []any {
	l, ok := deref(v).(*List)
	if !ok {
		if v == nil {
			return nil
		}
		fail("expected a list, got %s", typeOf(v))
	}
	if l == nil {
		return nil
	}
	return l.E
}

func deviceID(v any) map[string]any {
	s, ok := deref(v).(*Struct)
	if !ok {
		fail("device ID is a %s", typeOf(v))
	}
	out := map[string]any{}
	for _, k := range s.Keys {
		v := deref(s.F[k])
		if _, scalar := v.(string); !scalar {
			fail("device ID field %s is a %s", k, typeOf(v))
		}
		out[jsonName(s.Type, k)] = v
	}
	return out
}

func errorSubstring(m *Matcher) string {
	if m.Name == "gomega.MatchError" && len(m.Args) == 1 {
		if sub, ok := m.Args[0].(*Matcher); ok && sub.Name == "gomega.ContainSubstring" && len(sub.Args) == 1 {
			if s, ok := sub.Args[0].(string); ok {
				return s
			}
		}
		if s, ok := m.Args[0].(string); ok {
			return s
		}
	}
	if m.Name == "gomega.HaveOccurred" {
		return ""
	}
	fail("expectError matcher %s not understood", m.Name)
	return ""
}

// expectedClaim turns one element of expectResults (an AllocationResult, or the matcher that
// allocationResult() builds) into {"results": [...], "ordered": bool}.
func (in *Interp) expectedClaim(v any) map[string]any {
	if m, ok := v.(*Matcher); ok {
		fields := matchFields(m)
		dev, ok := fields["Devices"].(*Matcher)
		if !ok {
			fail("expected result matcher without Devices")
		}
		df := matchFields(dev)
		res, ok := df["Results"].(*Matcher)
		if !ok || res.Name != "gomega.ConsistOf" {
			fail("expected Results matcher not understood")
		}
		var results []any
		for _, r := range res.Args {
			for _, x := range flatten(r) {
				results = append(results, in.toJSON(x))
			}
		}
		return map[string]any{"results": nonNil(results), "ordered": false}
	}
	s, ok := deref(v).(*Struct)
	if !ok {
		fail("expected result is a %s", typeOf(v))
	}
	devs, _ := s.field("Devices")
	ds, _ := deref(devs).(*Struct)
	var results []any
	if ds != nil {
		r, _ := ds.field("Results")
		for _, x := range list(r) {
			results = append(results, in.toJSON(x))
		}
	}
	return map[string]any{"results": nonNil(results), "ordered": true}
}

func nonNil(l []any) []any {
	if l == nil {
		return []any{}
	}
	return l
}

func flatten(v any) []any {
	if l, ok := deref(v).(*List); ok {
		if l == nil {
			return nil
		}
		return l.E
	}
	return []any{v}
}

func matchFields(m *Matcher) map[string]any {
	if m.Name != "gstruct.MatchFields" || len(m.Args) != 2 {
		fail("matcher %s not understood", m.Name)
	}
	f, ok := m.Args[1].(*Map)
	if !ok {
		fail("MatchFields without fields")
	}
	out := map[string]any{}
	for _, k := range f.Keys {
		out[mapKey(k)] = f.M[mapKey(k)]
	}
	return out
}

// object converts an API object and sets its kind.
func (in *Interp) object(v any, kind, apiVersion string) any {
	j, ok := in.toJSON(v).(map[string]any)
	if !ok {
		fail("%s is not an object", kind)
	}
	j["kind"] = kind
	j["apiVersion"] = apiVersion
	return j
}

// field names of the API's JSON encoding that are not the Go name with a lower-case start
var jsonNames = map[string]string{
	"ObjectMeta": "metadata", "CEL": "cel", "UID": "uid", "ShareID": "shareID",
	"IntValue": "int", "BoolValue": "bool", "StringValue": "string", "VersionValue": "version",
	"IntValues": "ints", "BoolValues": "bools", "StringValues": "strings", "VersionValues": "versions",
}

func jsonName(typ, field string) string {
	if n, ok := jsonNames[field]; ok {
		return n
	}
	return strings.ToLower(field[:1]) + field[1:]
}

func (in *Interp) toJSON(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string, int64, bool:
		return x
	case Quant:
		return x.S
	case *Ptr:
		return in.toJSON(x.T)
	case *List:
		if x == nil {
			return nil
		}
		out := []any{}
		for _, e := range x.E {
			out = append(out, in.toJSON(e))
		}
		return out
	case *Map:
		if x == nil {
			return nil
		}
		out := map[string]any{}
		for _, k := range x.Keys {
			out[mapKey(k)] = in.toJSON(x.M[mapKey(k)])
		}
		return out
	case *Struct:
		if _, local := in.structs[x.Type]; local {
			for _, k := range x.Keys {
				if x.Embedded[k] {
					return in.toJSON(x.F[k])
				}
			}
			fail("local type %s without an embedded API object", x.Type)
		}
		out := map[string]any{}
		for _, k := range x.Keys {
			fv := in.toJSON(x.F[k])
			if fv == nil {
				continue
			}
			if x.Embedded[k] && k != "ObjectMeta" {
				m, ok := fv.(map[string]any)
				if !ok {
					fail("embedded %s is not an object", k)
				}
				for mk, mv := range m {
					out[mk] = mv
				}
				continue
			}
			out[jsonName(x.Type, k)] = fv
		}
		return out
	case *Matcher:
		fail("a matcher (%s) where an object was expected", x.Name)
	}
	fail("cannot encode %s", typeOf(v))
	return nil
}
