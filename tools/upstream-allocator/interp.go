// A small interpreter for the subset of Go that upstream's allocator test tables are written in:
// the file's own helper functions and methods run as written (no hand copy of their meaning),
// Kubernetes API types become generic structs, and the few library calls the helpers make
// (fmt.Sprintf, resource.MustParse, ptr.To, gomega matchers, ...) are modelled below. Anything
// else raises an error that names it, so a case the interpreter cannot evaluate is reported,
// never guessed.
package main

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"sort"
	"strconv"
	"strings"
)

type Struct struct {
	Type     string
	Keys     []string
	F        map[string]any
	Embedded map[string]bool
}

type Ptr struct{ T any }

type List struct {
	Type string
	E    []any
}

type Map struct {
	Type string
	Keys []any
	M    map[string]any
}

type Quant struct{ S string }

type Matcher struct {
	Name string
	Args []any
}

type Closure struct {
	Params  *ast.FieldList
	Body    *ast.BlockStmt
	Env     *Env
	Recv    *ast.FieldList
	Results *ast.FieldList
}

type Env struct {
	vars   map[string]*any
	parent *Env
}

func newEnv(p *Env) *Env { return &Env{vars: map[string]*any{}, parent: p} }

func (e *Env) lookup(n string) (*any, bool) {
	for ; e != nil; e = e.parent {
		if v, ok := e.vars[n]; ok {
			return v, true
		}
	}
	return nil, false
}

func (e *Env) define(n string, v any) {
	if n == "_" {
		return
	}
	x := v
	e.vars[n] = &x
}

type evalError struct{ msg string }

func fail(format string, a ...any) { panic(evalError{fmt.Sprintf(format, a...)}) }

type returnSignal struct{ vals []any }
type breakSignal struct{}

type Interp struct {
	fset    *token.FileSet
	funcs   map[string]*ast.FuncDecl
	methods map[string]*ast.FuncDecl // "Type.method"
	structs map[string]*ast.StructType
	globals map[string]ast.Expr // const/var initialisers
	gcache  map[string]any
	genv    *Env
}

func newInterp(fset *token.FileSet, files []*ast.File) *Interp {
	in := &Interp{fset: fset, funcs: map[string]*ast.FuncDecl{}, methods: map[string]*ast.FuncDecl{},
		structs: map[string]*ast.StructType{}, globals: map[string]ast.Expr{}, gcache: map[string]any{}}
	in.genv = newEnv(nil)
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					in.methods[recvType(d.Recv.List[0].Type)+"."+d.Name.Name] = d
				} else {
					in.funcs[d.Name.Name] = d
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if st, ok := s.Type.(*ast.StructType); ok {
							in.structs[s.Name.Name] = st
						}
					case *ast.ValueSpec:
						for i, n := range s.Names {
							if i < len(s.Values) {
								in.globals[n.Name] = s.Values[i]
							}
						}
					}
				}
			}
		}
	}
	return in
}

func recvType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvType(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return recvType(x.X)
	case *ast.IndexListExpr:
		return recvType(x.X)
	}
	return "?"
}

// constants of the Kubernetes API packages the tables use
var libConsts = map[string]any{
	"resourceapi.DeviceAllocationModeExactCount": "ExactCount",
	"resourceapi.DeviceAllocationModeAll":        "All",
	"resourceapi.DeviceTaintEffectNone":          "None",
	"resourceapi.DeviceTaintEffectNoSchedule":    "NoSchedule",
	"resourceapi.DeviceTaintEffectNoExecute":     "NoExecute",
	"resourceapi.DeviceTolerationOpExists":       "Exists",
	"resourceapi.DeviceTolerationOpEqual":        "Equal",
	"resourceapi.AllocationConfigSourceClass":    "FromClass",
	"resourceapi.AllocationConfigSourceClaim":    "FromClaim",
	"resourceapi.AllocationResultsMaxSize":       int64(32),
	"resourceapi.ResourceSliceMaxDevices":        int64(128),
	"resourceapi.DeviceConfigMaxSize":            int64(32),
	"internal.Stable":                            "stable",
	"internal.Incubating":                        "incubating",
	"internal.Experimental":                      "experimental",
	"v1.NodeSelectorOpIn":                        "In",
	"v1.NodeSelectorOpNotIn":                     "NotIn",
	"v1.NodeSelectorOpExists":                    "Exists",
	"resource.BinarySI":                          "BinarySI",
	"resource.DecimalSI":                         "DecimalSI",
	"resource.DecimalExponent":                   "DecimalExponent",
}

func exprString(e ast.Expr) string { return types.ExprString(e) }

func (in *Interp) global(name string) (any, bool) {
	if v, ok := in.gcache[name]; ok {
		return v, true
	}
	e, ok := in.globals[name]
	if !ok {
		return nil, false
	}
	v := in.eval(e, in.genv, nil)
	in.gcache[name] = v
	return v, true
}

func deref(v any) any {
	for {
		p, ok := v.(*Ptr)
		if !ok {
			return v
		}
		v = p.T
	}
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case int64:
		return "int64"
	case bool:
		return "bool"
	case *Struct:
		return x.Type
	case *Ptr:
		return "*" + typeOf(x.T)
	case *List:
		return x.Type
	case *Map:
		return x.Type
	case Quant:
		return "resource.Quantity"
	case *Matcher:
		return "types.GomegaMatcher"
	}
	return fmt.Sprintf("%T", v)
}

func mapKey(k any) string {
	switch x := deref(k).(type) {
	case string:
		return x
	case *Struct:
		var b strings.Builder
		for _, f := range x.Keys {
			fmt.Fprintf(&b, "%s=%v;", f, x.F[f])
		}
		return b.String()
	}
	return fmt.Sprint(k)
}

func (m *Map) set(k, v any) {
	s := mapKey(k)
	if _, ok := m.M[s]; !ok {
		m.Keys = append(m.Keys, k)
	}
	m.M[s] = v
}

func (s *Struct) set(k string, v any) {
	if _, ok := s.F[k]; !ok {
		s.Keys = append(s.Keys, k)
	}
	s.F[k] = v
}

// field reads a field, following embedded fields like Go's promotion does.
func (s *Struct) field(name string) (any, bool) {
	if v, ok := s.F[name]; ok {
		return v, true
	}
	for _, k := range s.Keys {
		if s.Embedded[k] {
			if e, ok := deref(s.F[k]).(*Struct); ok {
				if v, ok := e.field(name); ok {
					return v, true
				}
			}
		}
	}
	return nil, false
}

// owner finds the struct (itself or an embedded one) that holds a field, for assignment.
func (s *Struct) owner(name string) *Struct {
	if _, ok := s.F[name]; ok {
		return s
	}
	for _, k := range s.Keys {
		if s.Embedded[k] {
			if e, ok := deref(s.F[k]).(*Struct); ok {
				if o := e.owner(name); o != nil {
					return o
				}
			}
		}
	}
	return nil
}

// the element type translateCase gives a test case literal (its fields are lower-case)
const testcaseType = "testcase"

var k8sEmbedded = map[string]bool{"ObjectMeta": true, "TypeMeta": true, "DeviceConfiguration": true}

func (in *Interp) newStruct(typ string) *Struct {
	s := &Struct{Type: typ, F: map[string]any{}, Embedded: map[string]bool{}}
	return s
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case *Struct:
		c := &Struct{Type: x.Type, Keys: append([]string(nil), x.Keys...), F: map[string]any{}, Embedded: x.Embedded}
		for k, f := range x.F {
			c.F[k] = deepCopy(f)
		}
		return c
	case *Ptr:
		return &Ptr{deepCopy(x.T)}
	case *List:
		if x == nil {
			return x
		}
		c := &List{Type: x.Type}
		for _, e := range x.E {
			c.E = append(c.E, deepCopy(e))
		}
		return c
	case *Map:
		c := &Map{Type: x.Type, M: map[string]any{}}
		for _, k := range x.Keys {
			c.Keys = append(c.Keys, k)
			c.M[mapKey(k)] = deepCopy(x.M[mapKey(k)])
		}
		return c
	}
	return v
}

// ---- expressions ----

// eval evaluates e; typ is the type the context expects (for elided composite literal types).
func (in *Interp) eval(e ast.Expr, env *Env, typ ast.Expr) any {
	switch x := e.(type) {
	case *ast.BasicLit:
		switch x.Kind {
		case token.STRING:
			s, err := strconv.Unquote(x.Value)
			if err != nil {
				fail("bad string %s", x.Value)
			}
			return s
		case token.INT:
			n, err := strconv.ParseInt(x.Value, 0, 64)
			if err != nil {
				fail("bad int %s", x.Value)
			}
			return n
		case token.CHAR:
			s, _ := strconv.Unquote(x.Value)
			return int64([]rune(s)[0])
		}
		fail("unsupported literal %s", x.Value)
	case *ast.Ident:
		switch x.Name {
		case "nil":
			return nil
		case "true":
			return true
		case "false":
			return false
		}
		if p, ok := env.lookup(x.Name); ok {
			return *p
		}
		if v, ok := in.global(x.Name); ok {
			return v
		}
		if fd, ok := in.funcs[x.Name]; ok {
			return &Closure{Params: fd.Type.Params, Body: fd.Body, Env: in.genv, Results: fd.Type.Results}
		}
		fail("unknown identifier %s", x.Name)
	case *ast.ParenExpr:
		return in.eval(x.X, env, typ)
	case *ast.SelectorExpr:
		if id, ok := x.X.(*ast.Ident); ok {
			if _, local := env.lookup(id.Name); !local {
				if _, g := in.globals[id.Name]; !g {
					q := id.Name + "." + x.Sel.Name
					if v, ok := libConsts[q]; ok {
						return v
					}
					fail("unknown package member %s", q)
				}
			}
		}
		base := in.eval(x.X, env, nil)
		s, ok := deref(base).(*Struct)
		if !ok {
			if deref(base) == nil {
				return nil // zero value of an unset struct field
			}
			fail("field %s of non-struct %s", x.Sel.Name, typeOf(base))
		}
		v, _ := s.field(x.Sel.Name)
		return v
	case *ast.StarExpr:
		v := in.eval(x.X, env, nil)
		p, ok := v.(*Ptr)
		if !ok {
			fail("dereference of non-pointer %s", typeOf(v))
		}
		return p.T
	case *ast.UnaryExpr:
		switch x.Op {
		case token.AND:
			v := in.eval(x.X, env, nil)
			return &Ptr{v}
		case token.NOT:
			return !truth(in.eval(x.X, env, nil))
		case token.SUB:
			v := in.eval(x.X, env, nil)
			if n, ok := v.(int64); ok {
				return -n
			}
		}
		fail("unsupported unary %s", x.Op)
	case *ast.BinaryExpr:
		return in.binary(x, env)
	case *ast.CompositeLit:
		t := x.Type
		if t == nil {
			t = typ
		}
		return in.composite(x, t, env)
	case *ast.IndexExpr:
		base := deref(in.eval(x.X, env, nil))
		switch b := base.(type) {
		case *List:
			i := toInt(in.eval(x.Index, env, nil))
			if i < 0 || i >= len(b.E) {
				fail("index %d out of range", i)
			}
			return b.E[i]
		case *Map:
			return b.M[mapKey(in.eval(x.Index, env, nil))]
		case *Closure:
			return b // generic instantiation
		}
		fail("index of %s", typeOf(base))
	case *ast.IndexListExpr:
		return in.eval(x.X, env, nil)
	case *ast.CallExpr:
		vals := in.call(x, env)
		if len(vals) == 0 {
			return nil
		}
		return vals[0]
	case *ast.FuncLit:
		return &Closure{Params: x.Type.Params, Body: x.Body, Env: env, Results: x.Type.Results}
	case *ast.SliceExpr:
		b := deref(in.eval(x.X, env, nil)).(*List)
		lo, hi := 0, len(b.E)
		if x.Low != nil {
			lo = toInt(in.eval(x.Low, env, nil))
		}
		if x.High != nil {
			hi = toInt(in.eval(x.High, env, nil))
		}
		return &List{Type: b.Type, E: append([]any(nil), b.E[lo:hi]...)}
	}
	fail("unsupported expression %T at %s", e, in.fset.Position(e.Pos()))
	return nil
}

func truth(v any) bool {
	b, ok := v.(bool)
	if !ok {
		fail("not a bool: %s", typeOf(v))
	}
	return b
}

func toInt(v any) int {
	n, ok := v.(int64)
	if !ok {
		fail("not an int: %s", typeOf(v))
	}
	return int(n)
}

func (in *Interp) binary(x *ast.BinaryExpr, env *Env) any {
	if x.Op == token.LAND {
		return truth(in.eval(x.X, env, nil)) && truth(in.eval(x.Y, env, nil))
	}
	if x.Op == token.LOR {
		return truth(in.eval(x.X, env, nil)) || truth(in.eval(x.Y, env, nil))
	}
	a, b := in.eval(x.X, env, nil), in.eval(x.Y, env, nil)
	switch x.Op {
	case token.EQL, token.NEQ:
		eq := equalValues(a, b)
		if x.Op == token.EQL {
			return eq
		}
		return !eq
	}
	if sa, ok := a.(string); ok {
		sb, ok := b.(string)
		if ok && x.Op == token.ADD {
			return sa + sb
		}
	}
	ia, ok1 := a.(int64)
	ib, ok2 := b.(int64)
	if !ok1 || !ok2 {
		fail("unsupported operands %s %s %s", typeOf(a), x.Op, typeOf(b))
	}
	switch x.Op {
	case token.ADD:
		return ia + ib
	case token.SUB:
		return ia - ib
	case token.MUL:
		return ia * ib
	case token.QUO:
		return ia / ib
	case token.REM:
		return ia % ib
	case token.LSS:
		return ia < ib
	case token.LEQ:
		return ia <= ib
	case token.GTR:
		return ia > ib
	case token.GEQ:
		return ia >= ib
	}
	fail("unsupported operator %s", x.Op)
	return nil
}

func equalValues(a, b any) bool {
	if a == nil || b == nil {
		isNil := func(v any) bool {
			switch x := v.(type) {
			case nil:
				return true
			case *List:
				return x == nil
			case *Map:
				return x == nil
			}
			return false
		}
		return isNil(a) && isNil(b)
	}
	switch x := a.(type) {
	case string, int64, bool:
		return a == b
	case Quant:
		y, ok := b.(Quant)
		return ok && x.S == y.S
	}
	return a == b
}

// typeName of a type expression, with the element and embedded information composite needs
func (in *Interp) composite(x *ast.CompositeLit, t ast.Expr, env *Env) any {
	if t == nil {
		fail("composite literal without type at %s", in.fset.Position(x.Pos()))
	}
	switch tt := t.(type) {
	case *ast.StarExpr:
		return &Ptr{in.composite(x, tt.X, env)}
	case *ast.ArrayType:
		l := &List{Type: exprString(t), E: []any{}}
		for _, el := range x.Elts {
			l.E = append(l.E, in.eval(el, env, tt.Elt))
		}
		return l
	case *ast.MapType:
		m := &Map{Type: exprString(t), M: map[string]any{}}
		for _, el := range x.Elts {
			kv := el.(*ast.KeyValueExpr)
			m.set(in.eval(kv.Key, env, tt.Key), in.eval(kv.Value, env, tt.Value))
		}
		return m
	case *ast.IndexExpr: // generic named type: sets.Set[T] etc.
		return in.composite(x, tt.X, env)
	}
	name := exprString(t)
	if len(x.Elts) > 0 {
		if kv, ok := x.Elts[0].(*ast.KeyValueExpr); ok {
			// a named map type (gstruct.Fields, ConsumedCapacity): its keys are expressions,
			// not field names; an API struct's fields are exported, so a lower-case
			// identifier key outside the file's own structs is a map key too
			id, ident := kv.Key.(*ast.Ident)
			_, local := in.structs[name]
			mapKey := !ident || (!local && name != testcaseType &&
				!(id.Name[0] >= 'A' && id.Name[0] <= 'Z'))
			if mapKey {
				// a named map type such as gstruct.Fields
				m := &Map{Type: name, M: map[string]any{}}
				for _, el := range x.Elts {
					kv := el.(*ast.KeyValueExpr)
					m.set(in.eval(kv.Key, env, nil), in.eval(kv.Value, env, nil))
				}
				return m
			}
		}
	}
	s := in.newStruct(name)
	local := in.structs[name]
	var fieldNames []string
	var fieldTypes []ast.Expr
	if local != nil {
		for _, f := range local.Fields.List {
			if len(f.Names) == 0 {
				n := recvType(f.Type)
				if se, ok := f.Type.(*ast.StarExpr); ok {
					if sel, ok := se.X.(*ast.SelectorExpr); ok {
						n = sel.Sel.Name
					}
				} else if sel, ok := f.Type.(*ast.SelectorExpr); ok {
					n = sel.Sel.Name
				}
				s.Embedded[n] = true
				fieldNames = append(fieldNames, n)
				fieldTypes = append(fieldTypes, f.Type)
			}
			for _, id := range f.Names {
				fieldNames = append(fieldNames, id.Name)
				fieldTypes = append(fieldTypes, f.Type)
			}
		}
	}
	for i, el := range x.Elts {
		if kv, ok := el.(*ast.KeyValueExpr); ok {
			k := kv.Key.(*ast.Ident).Name
			var ft ast.Expr
			for j, fn := range fieldNames {
				if fn == k {
					ft = fieldTypes[j]
				}
			}
			if k8sEmbedded[k] && local == nil {
				s.Embedded[k] = true
			}
			s.set(k, in.eval(kv.Value, env, ft))
			continue
		}
		if i >= len(fieldNames) {
			fail("positional literal of unknown type %s", name)
		}
		s.set(fieldNames[i], in.eval(el, env, fieldTypes[i]))
	}
	return s
}

// ---- calls ----

func (in *Interp) args(call *ast.CallExpr, env *Env) []any {
	var out []any
	for i, a := range call.Args {
		v := in.eval(a, env, nil)
		if call.Ellipsis.IsValid() && i == len(call.Args)-1 {
			if l, ok := deref(v).(*List); ok && l != nil {
				out = append(out, l.E...)
				continue
			}
			if v == nil {
				continue
			}
		}
		out = append(out, v)
	}
	return out
}

func funName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return funName(x.X) + "." + x.Sel.Name
	case *ast.IndexExpr:
		return funName(x.X)
	case *ast.IndexListExpr:
		return funName(x.X)
	case *ast.ParenExpr:
		return funName(x.X)
	}
	return ""
}

var conversions = map[string]bool{"string": true, "int64": true, "int": true, "int32": true,
	"bool": true, "any": true}

func (in *Interp) call(call *ast.CallExpr, env *Env) []any {
	fun := call.Fun
	for {
		if p, ok := fun.(*ast.ParenExpr); ok {
			fun = p.X
			continue
		}
		break
	}
	// type conversions: (*T)(x), T(x), pkg.T(x)
	if _, ok := fun.(*ast.StarExpr); ok {
		return []any{in.eval(call.Args[0], env, nil)}
	}
	if _, ok := fun.(*ast.ArrayType); ok {
		return []any{in.eval(call.Args[0], env, nil)}
	}
	name := funName(fun)
	if id, ok := fun.(*ast.Ident); ok {
		if _, local := env.lookup(id.Name); !local {
			if conversions[id.Name] && len(call.Args) == 1 {
				return []any{in.eval(call.Args[0], env, nil)}
			}
			if _, isType := in.structs[id.Name]; isType && len(call.Args) == 1 {
				return []any{in.eval(call.Args[0], env, nil)}
			}
			switch id.Name {
			case "append":
				a := in.args(call, env)
				var l *List
				if a[0] != nil {
					l = deref(a[0]).(*List)
				}
				out := &List{E: []any{}}
				if l != nil {
					out.Type = l.Type
					out.E = append(out.E, l.E...)
				}
				out.E = append(out.E, a[1:]...)
				return []any{out}
			case "make":
				t := call.Args[0]
				switch t.(type) {
				case *ast.MapType:
					return []any{&Map{Type: exprString(t), M: map[string]any{}}}
				case *ast.ArrayType:
					l := &List{Type: exprString(t), E: []any{}}
					if len(call.Args) > 1 {
						n := toInt(in.eval(call.Args[1], env, nil))
						for i := 0; i < n; i++ {
							l.E = append(l.E, nil)
						}
					}
					return []any{l}
				}
				fail("make of %s", exprString(t))
			case "len":
				switch v := deref(in.eval(call.Args[0], env, nil)).(type) {
				case *List:
					if v == nil {
						return []any{int64(0)}
					}
					return []any{int64(len(v.E))}
				case *Map:
					return []any{int64(len(v.Keys))}
				case string:
					return []any{int64(len(v))}
				case nil:
					return []any{int64(0)}
				}
			case "new":
				// new(T) is a pointer to T's zero value; from Go 1.26 new(expr) points
				// to a copy of the value
				return []any{&Ptr{in.newValue(call.Args[0], env)}}
			case "panic":
				fail("panic: %v", in.eval(call.Args[0], env, nil))
			}
		}
	}
	if sel, ok := fun.(*ast.SelectorExpr); ok {
		if id, ok := sel.X.(*ast.Ident); ok {
			if _, local := env.lookup(id.Name); !local {
				if _, g := in.globals[id.Name]; !g {
					return []any{in.library(id.Name+"."+sel.Sel.Name, call, env)}
				}
			}
		}
		// method call
		recv := in.eval(sel.X, env, nil)
		return in.method(recv, sel.Sel.Name, in.args(call, env))
	}
	f := in.eval(fun, env, nil)
	c, ok := f.(*Closure)
	if !ok {
		fail("call of non-function %s (%s)", name, typeOf(f))
	}
	return in.invoke(c, nil, in.args(call, env))
}

func (in *Interp) method(recv any, name string, args []any) []any {
	t := strings.TrimPrefix(typeOf(recv), "*")
	if md, ok := in.methods[t+"."+name]; ok {
		return in.invoke(&Closure{Params: md.Type.Params, Body: md.Body, Env: in.genv, Recv: md.Recv, Results: md.Type.Results}, recv, args)
	}
	s, _ := deref(recv).(*Struct)
	switch name {
	case "DeepCopy":
		if s == nil {
			fail("DeepCopy of %s", typeOf(recv))
		}
		// a local wrapper promotes the method of its embedded API object
		if _, local := in.structs[s.Type]; local {
			for _, k := range s.Keys {
				if s.Embedded[k] {
					return []any{&Ptr{deepCopy(deref(s.F[k]))}}
				}
			}
		}
		return []any{&Ptr{deepCopy(s)}}
	case "Clone":
		return []any{deepCopy(recv)}
	}
	// promoted methods of embedded local types
	if s != nil {
		for _, k := range s.Keys {
			if s.Embedded[k] {
				e := s.F[k]
				if _, ok := in.methods[strings.TrimPrefix(typeOf(e), "*")+"."+name]; ok {
					return in.method(e, name, args)
				}
			}
		}
	}
	fail("unknown method %s.%s", t, name)
	return nil
}

func (in *Interp) invoke(c *Closure, recv any, args []any) (ret []any) {
	env := newEnv(c.Env)
	if c.Recv != nil && len(c.Recv.List[0].Names) > 0 {
		env.define(c.Recv.List[0].Names[0].Name, recv)
	}
	i := 0
	params := c.Params.List
	for pi, p := range params {
		_, variadic := p.Type.(*ast.Ellipsis)
		names := p.Names
		if len(names) == 0 {
			names = []*ast.Ident{{Name: "_"}}
		}
		for _, n := range names {
			if variadic && pi == len(params)-1 {
				l := &List{Type: "[]" + exprString(p.Type.(*ast.Ellipsis).Elt), E: []any{}}
				if i < len(args) {
					l.E = append(l.E, args[i:]...)
				} else {
					l = nil
				}
				if l == nil {
					env.define(n.Name, (*List)(nil))
				} else {
					env.define(n.Name, l)
				}
				i = len(args)
				continue
			}
			if i >= len(args) {
				fail("too few arguments")
			}
			env.define(n.Name, args[i])
			i++
		}
	}
	// named results
	if c.Results != nil {
		for _, r := range c.Results.List {
			for _, n := range r.Names {
				env.define(n.Name, zeroValue(r.Type))
			}
		}
	}
	defer func() {
		if r := recover(); r != nil {
			if rs, ok := r.(returnSignal); ok {
				ret = rs.vals
				return
			}
			panic(r)
		}
	}()
	in.block(c.Body.List, env)
	return nil
}

func (in *Interp) newValue(arg ast.Expr, env *Env) (v any) {
	switch x := arg.(type) {
	case *ast.BasicLit, *ast.CallExpr, *ast.CompositeLit, *ast.BinaryExpr, *ast.UnaryExpr:
		return in.eval(arg, env, nil)
	case *ast.Ident:
		if _, ok := env.lookup(x.Name); ok {
			return in.eval(arg, env, nil)
		}
		if _, ok := in.globals[x.Name]; ok {
			return in.eval(arg, env, nil)
		}
	}
	return zeroValue(arg)
}

func zeroValue(t ast.Expr) any {
	switch tt := t.(type) {
	case *ast.Ident:
		switch tt.Name {
		case "bool":
			return false
		case "int", "int64", "int32":
			return int64(0)
		case "string":
			return ""
		}
	case *ast.ArrayType:
		return (*List)(nil)
	case *ast.MapType:
		return (*Map)(nil)
	case *ast.StarExpr, *ast.InterfaceType:
		return nil
	case *ast.SelectorExpr:
		n := exprString(t)
		if n == "resource.Quantity" {
			return Quant{"0"}
		}
		return &Struct{Type: n, F: map[string]any{}, Embedded: map[string]bool{}}
	}
	return nil
}

func (in *Interp) library(name string, call *ast.CallExpr, env *Env) any {
	switch name {
	case "fmt.Sprintf":
		a := in.args(call, env)
		f := a[0].(string)
		var rest []any
		for _, v := range a[1:] {
			switch x := deref(v).(type) {
			case string, int64, bool:
				rest = append(rest, x)
			case Quant:
				rest = append(rest, x.S)
			default:
				fail("Sprintf argument %s", typeOf(v))
			}
		}
		return fmt.Sprintf(f, rest...)
	case "resource.MustParse":
		return Quant{in.eval(call.Args[0], env, nil).(string)}
	case "resource.NewQuantity", "resource.NewScaledQuantity":
		n := in.eval(call.Args[0], env, nil).(int64)
		if name == "resource.NewScaledQuantity" {
			sc := in.eval(call.Args[1], env, nil).(int64)
			return &Ptr{Quant{fmt.Sprintf("%de%d", n, sc)}}
		}
		return &Ptr{Quant{strconv.FormatInt(n, 10)}}
	case "ptr.To":
		return &Ptr{in.eval(call.Args[0], env, nil)}
	case "sets.New", "sets.NewString":
		return &List{Type: "set", E: in.args(call, env)}
	case "internal.MakeDeviceID":
		a := in.args(call, env)
		s := in.newStruct("DeviceID")
		s.set("Driver", a[0])
		s.set("Pool", a[1])
		s.set("Device", a[2])
		return s
	case "internal.MakeSharedDeviceID":
		a := in.args(call, env)
		s := in.newStruct("SharedDeviceID")
		d := deref(a[0]).(*Struct)
		for _, k := range d.Keys {
			s.set(k, d.F[k])
		}
		s.set("ShareID", a[1])
		return s
	case "slices.Concat":
		out := &List{E: []any{}}
		for _, a := range in.args(call, env) {
			l := deref(a).(*List)
			if l != nil {
				out.Type = l.Type
				out.E = append(out.E, l.E...)
			}
		}
		return out
	case "strings.Repeat":
		a := in.args(call, env)
		return strings.Repeat(a[0].(string), toInt(a[1]))
	}
	pkg := name[:strings.Index(name, ".")]
	switch pkg {
	case "gomega", "gstruct":
		return &Matcher{Name: name, Args: in.args(call, env)}
	case "resourceapi", "v1", "metav1", "apitypes", "types":
		if len(call.Args) == 1 { // a conversion to a named API type
			return in.eval(call.Args[0], env, nil)
		}
	}
	fail("unsupported library call %s", name)
	return nil
}

// ---- statements ----

func (in *Interp) block(list []ast.Stmt, env *Env) {
	for _, s := range list {
		in.stmt(s, env)
	}
}

func (in *Interp) assign(lhs ast.Expr, v any, env *Env, define bool) {
	switch l := lhs.(type) {
	case *ast.Ident:
		if define {
			env.define(l.Name, v)
			return
		}
		if l.Name == "_" {
			return
		}
		p, ok := env.lookup(l.Name)
		if !ok {
			fail("assignment to unknown %s", l.Name)
		}
		*p = v
	case *ast.SelectorExpr:
		base := in.lvalueStruct(l.X, env)
		o := base.owner(l.Sel.Name)
		if o == nil {
			o = base
		}
		o.set(l.Sel.Name, v)
	case *ast.IndexExpr:
		b := deref(in.eval(l.X, env, nil))
		switch c := b.(type) {
		case *List:
			c.E[toInt(in.eval(l.Index, env, nil))] = v
		case *Map:
			c.set(in.eval(l.Index, env, nil), v)
		default:
			fail("index assignment into %s", typeOf(b))
		}
	case *ast.StarExpr:
		p := in.eval(l.X, env, nil).(*Ptr)
		p.T = v
	default:
		fail("unsupported assignment target %T", lhs)
	}
}

// lvalueStruct evaluates e to a struct, creating unset struct fields on the way (they are
// zero-valued structs in Go).
func (in *Interp) lvalueStruct(e ast.Expr, env *Env) *Struct {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		parent := in.lvalueStruct(sel.X, env)
		v, _ := parent.field(sel.Sel.Name)
		if s, ok := deref(v).(*Struct); ok {
			return s
		}
		s := in.newStruct("")
		o := parent.owner(sel.Sel.Name)
		if o == nil {
			o = parent
		}
		o.set(sel.Sel.Name, s)
		return s
	}
	v := in.eval(e, env, nil)
	s, ok := deref(v).(*Struct)
	if !ok {
		fail("assignment into field of %s", typeOf(v))
	}
	return s
}

func (in *Interp) stmt(s ast.Stmt, env *Env) {
	switch x := s.(type) {
	case *ast.ExprStmt:
		in.eval(x.X, env, nil)
	case *ast.AssignStmt:
		define := x.Tok == token.DEFINE
		if x.Tok != token.ASSIGN && x.Tok != token.DEFINE {
			op := map[token.Token]token.Token{token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB}[x.Tok]
			if op == 0 {
				fail("unsupported assignment %s", x.Tok)
			}
			v := in.binary(&ast.BinaryExpr{X: x.Lhs[0], Op: op, Y: x.Rhs[0]}, env)
			in.assign(x.Lhs[0], v, env, false)
			return
		}
		var vals []any
		if len(x.Rhs) == 1 && len(x.Lhs) > 1 {
			call, ok := x.Rhs[0].(*ast.CallExpr)
			if !ok {
				fail("unsupported multi-value assignment")
			}
			vals = in.call(call, env)
		} else {
			for _, r := range x.Rhs {
				vals = append(vals, in.eval(r, env, nil))
			}
		}
		for i, l := range x.Lhs {
			in.assign(l, vals[i], env, define)
		}
	case *ast.DeclStmt:
		g := x.Decl.(*ast.GenDecl)
		for _, sp := range g.Specs {
			vs, ok := sp.(*ast.ValueSpec)
			if !ok {
				continue
			}
			for i, n := range vs.Names {
				var v any
				if i < len(vs.Values) {
					v = in.eval(vs.Values[i], env, vs.Type)
				} else {
					v = zeroValue(vs.Type)
				}
				env.define(n.Name, v)
			}
		}
	case *ast.ReturnStmt:
		var vals []any
		for _, r := range x.Results {
			vals = append(vals, in.eval(r, env, nil))
		}
		panic(returnSignal{vals})
	case *ast.IfStmt:
		e := newEnv(env)
		if x.Init != nil {
			in.stmt(x.Init, e)
		}
		if truth(in.eval(x.Cond, e, nil)) {
			in.block(x.Body.List, newEnv(e))
		} else if x.Else != nil {
			in.stmt(x.Else, e)
		}
	case *ast.BlockStmt:
		in.block(x.List, newEnv(env))
	case *ast.IncDecStmt:
		v := in.eval(x.X, env, nil).(int64)
		if x.Tok == token.INC {
			v++
		} else {
			v--
		}
		in.assign(x.X, v, env, false)
	case *ast.ForStmt:
		e := newEnv(env)
		if x.Init != nil {
			in.stmt(x.Init, e)
		}
		for n := 0; x.Cond == nil || truth(in.eval(x.Cond, e, nil)); n++ {
			if n > 100000 {
				fail("loop does not end")
			}
			if in.loopBody(x.Body, e) {
				break
			}
			if x.Post != nil {
				in.stmt(x.Post, e)
			}
		}
	case *ast.RangeStmt:
		v := deref(in.eval(x.X, env, nil))
		var keys, vals []any
		switch c := v.(type) {
		case *List:
			if c != nil {
				for i, el := range c.E {
					keys = append(keys, int64(i))
					vals = append(vals, el)
				}
			}
		case *Map:
			if c != nil {
				ks := append([]any(nil), c.Keys...)
				sort.SliceStable(ks, func(i, j int) bool { return mapKey(ks[i]) < mapKey(ks[j]) })
				for _, k := range ks {
					keys = append(keys, k)
					vals = append(vals, c.M[mapKey(k)])
				}
			}
		case int64:
			for i := int64(0); i < c; i++ {
				keys = append(keys, i)
				vals = append(vals, nil)
			}
		case nil:
		default:
			fail("range over %s", typeOf(v))
		}
		for i := range keys {
			e := newEnv(env)
			def := x.Tok == token.DEFINE
			if x.Key != nil {
				in.assign(x.Key, keys[i], e, def)
			}
			if x.Value != nil {
				in.assign(x.Value, vals[i], e, def)
			}
			if in.loopBody(x.Body, e) {
				break
			}
		}
	case *ast.SwitchStmt:
		e := newEnv(env)
		if x.Init != nil {
			in.stmt(x.Init, e)
		}
		var tag any = true
		if x.Tag != nil {
			tag = in.eval(x.Tag, e, nil)
		}
		var def *ast.CaseClause
		for _, c := range x.Body.List {
			cc := c.(*ast.CaseClause)
			if cc.List == nil {
				def = cc
				continue
			}
			for _, ce := range cc.List {
				if equalValues(tag, in.eval(ce, e, nil)) {
					in.block(cc.Body, newEnv(e))
					return
				}
			}
		}
		if def != nil {
			in.block(def.Body, newEnv(e))
		}
	case *ast.TypeSwitchStmt:
		e := newEnv(env)
		var bind string
		var subject ast.Expr
		switch a := x.Assign.(type) {
		case *ast.AssignStmt:
			bind = a.Lhs[0].(*ast.Ident).Name
			subject = a.Rhs[0].(*ast.TypeAssertExpr).X
		case *ast.ExprStmt:
			subject = a.X.(*ast.TypeAssertExpr).X
		}
		v := in.eval(subject, e, nil)
		t := typeOf(v)
		var def *ast.CaseClause
		for _, c := range x.Body.List {
			cc := c.(*ast.CaseClause)
			if cc.List == nil {
				def = cc
				continue
			}
			for _, ce := range cc.List {
				if typeMatches(t, v, exprString(ce)) {
					b := newEnv(e)
					if bind != "" {
						b.define(bind, v)
					}
					in.block(cc.Body, b)
					return
				}
			}
		}
		if def != nil {
			b := newEnv(e)
			if bind != "" {
				b.define(bind, v)
			}
			in.block(def.Body, b)
		}
	case *ast.BranchStmt:
		if x.Tok == token.BREAK {
			panic(breakSignal{})
		}
		fail("unsupported branch %s", x.Tok)
	default:
		fail("unsupported statement %T at %s", s, in.fset.Position(s.Pos()))
	}
}

func typeMatches(t string, v any, want string) bool {
	if want == "nil" {
		return v == nil
	}
	if t == want {
		return true
	}
	// untyped constants and named string types
	if want == "string" {
		_, ok := v.(string)
		return ok
	}
	return false
}

// loopBody runs one iteration; true when it ended with break.
func (in *Interp) loopBody(b *ast.BlockStmt, env *Env) (broke bool) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(breakSignal); ok {
				broke = true
				return
			}
			panic(r)
		}
	}()
	in.block(b.List, newEnv(env))
	return false
}
