package ledger_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
)

// constantsOfType reads this package's source and returns the values of its string constants
// of the named type, in source order: what StatusNames, EventKindNames and ModeNames must list.
func constantsOfType(t *testing.T, typeName string) []string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != typeName {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("a %s constant is not a string literal: %#v", typeName, v)
					}
					s, _ := strconv.Unquote(lit.Value)
					values = append(values, s)
				}
			}
		}
	}
	if len(values) == 0 {
		t.Fatalf("no constants of type %s found", typeName)
	}
	return values
}

func TestNames_ListEveryConstantOfTheirType(t *testing.T) {
	for _, tc := range []struct {
		typeName string
		names    []string
	}{
		{"Status", ledger.StatusNames()},
		{"EventKind", ledger.EventKindNames()},
		{"Mode", ledger.ModeNames()},
	} {
		want := constantsOfType(t, tc.typeName)
		got := slices.Clone(tc.names)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("the names of %s = %v; the package declares %v", tc.typeName, got, want)
		}
	}
}
