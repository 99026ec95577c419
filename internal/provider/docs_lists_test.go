package provider

import (
	"context"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	providerschema "github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"

	"github.com/artemis-studio/terraform-provider-artemis/internal/artemis"
	"github.com/artemis-studio/terraform-provider-artemis/internal/ledger"
	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

// The lists and defaults that the docs state are tested here against the code they describe, so
// that a new ledger status, event kind or a changed default cannot leave the docs behind.

var codeSpan = regexp.MustCompile("`([^`]+)`")

// codeSpans returns the distinct code spans of a Markdown text, sorted.
func codeSpans(s string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(s, -1) {
		if !slices.Contains(out, m[1]) {
			out = append(out, m[1])
		}
	}
	slices.Sort(out)
	return out
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

func transferRunsSchema(t *testing.T) dsschema.Schema {
	t.Helper()
	var resp datasource.SchemaResponse
	NewTransferRunsDataSource().Schema(context.Background(), datasource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	return resp.Schema
}

func TestTransferRunsDocs_NameExactlyTheLedgersStatusesEventKindsAndModes(t *testing.T) {
	s := transferRunsSchema(t)
	runs := s.Attributes["runs"].(dsschema.ListNestedAttribute).NestedObject.Attributes
	events := runs["events"].(dsschema.ListNestedAttribute).NestedObject.Attributes
	for _, tc := range []struct {
		attr string
		desc string
		want []string
	}{
		{"runs.status", runs["status"].GetMarkdownDescription(), ledger.StatusNames()},
		{"runs.mode", runs["mode"].GetMarkdownDescription(), ledger.ModeNames()},
		{"runs.events.kind", events["kind"].GetMarkdownDescription(), ledger.EventKindNames()},
	} {
		if got := codeSpans(tc.desc); !slices.Equal(got, sorted(tc.want)) {
			t.Errorf("%s's description names %v; the ledger has %v", tc.attr, got, sorted(tc.want))
		}
	}
	// The status filter names every status (and, besides them, only the attribute it points to).
	got := codeSpans(s.Attributes["status"].GetMarkdownDescription())
	got = slices.DeleteFunc(got, func(s string) bool { return s == "lease_holder" })
	if want := sorted(ledger.StatusNames()); !slices.Equal(got, want) {
		t.Errorf("the status filter's description names %v; the ledger has %v", got, want)
	}
	if want := ledger.StatusNames(); !slices.Equal(transferRunStatuses, want) {
		t.Errorf("the status filter accepts %v; the ledger has %v", transferRunStatuses, want)
	}
}

// tableColumn returns the first column's code spans of the Markdown table that follows heading
// in the text, in order.
func tableColumn(t *testing.T, text, heading string) []string {
	t.Helper()
	_, after, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("no heading %q", heading)
	}
	var out []string
	inTable := false
	for _, line := range strings.Split(after, "\n") {
		if !strings.HasPrefix(line, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cell := strings.TrimSpace(strings.Split(line, "|")[1])
		if m := codeSpan.FindStringSubmatch(cell); m != nil && m[0] == cell {
			out = append(out, m[1])
		}
	}
	return out
}

func TestLedgerGuide_ListsExactlyTheLedgersStatusesAndEventKinds(t *testing.T) {
	b, err := os.ReadFile("../../templates/guides/ledger.md.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	if got, want := tableColumn(t, guide, "### Statuses"), ledger.StatusNames(); !slices.Equal(got, want) {
		t.Errorf("the guide's Statuses table lists %v; the ledger has %v", got, want)
	}
	if got, want := tableColumn(t, guide, "### Event kinds"), ledger.EventKindNames(); !slices.Equal(got, want) {
		t.Errorf("the guide's Event kinds table lists %v; the ledger has %v", got, want)
	}
	// The runs table's row names the statuses too.
	row := regexp.MustCompile(`status \(([^)]*)\)`).FindStringSubmatch(guide)
	if row == nil {
		t.Fatal("the guide's runs row names no statuses")
	}
	if got, want := codeSpans(row[1]), sorted(ledger.StatusNames()); !slices.Equal(got, want) {
		t.Errorf("the guide's runs row names the statuses %v; the ledger has %v", got, want)
	}
}

func TestQueueTransferDocs_StateTheSchemaDefaultsAndTheEnginesDefaults(t *testing.T) {
	ctx := context.Background()
	var resp resource.SchemaResponse
	NewQueueTransferResource().Schema(ctx, resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	attrs := resp.Schema.Attributes

	int64Default := func(name string) int64 {
		d := attrs[name].(rschema.Int64Attribute).Default
		if d == nil {
			t.Fatalf("%s has no schema default", name)
		}
		var out defaults.Int64Response
		d.DefaultInt64(ctx, defaults.Int64Request{Path: path.Root(name)}, &out)
		return out.PlanValue.ValueInt64()
	}
	for _, tc := range []struct {
		attr   string
		engine int64  // the engine's default, which the schema's must equal
		text   string // how the description states it
	}{
		{"batch_size", transfer.DefaultBatchSize, "Default " + strconv.FormatInt(transfer.DefaultBatchSize, 10) + "."},
		{"staging_chunk_size", transfer.DefaultChunkSize, "Default " + strconv.FormatInt(transfer.DefaultChunkSize, 10) + "."},
		{"max_in_flight_bytes", transfer.DefaultMaxInFlightBytes, "Default " + strconv.FormatInt(transfer.DefaultMaxInFlightBytes>>20, 10) + " MiB."},
	} {
		if got := int64Default(tc.attr); got != tc.engine {
			t.Errorf("%s: schema default %d, the engine's %d", tc.attr, got, tc.engine)
		}
		if desc := attrs[tc.attr].GetMarkdownDescription(); !strings.Contains(desc, tc.text) {
			t.Errorf("%s's description does not say %q: %s", tc.attr, tc.text, desc)
		}
	}

	for _, name := range []string{"mode", "on_destroy"} {
		d := attrs[name].(rschema.StringAttribute).Default
		var out defaults.StringResponse
		d.DefaultString(ctx, defaults.StringRequest{Path: path.Root(name)}, &out)
		want := "`" + out.PlanValue.ValueString() + "` (default)"
		if desc := attrs[name].GetMarkdownDescription(); !strings.Contains(desc, want) {
			t.Errorf("%s's description does not say %q: %s", name, want, desc)
		}
	}

	for name, want := range map[string]time.Duration{"create": defaultCreateTimeout, "update": defaultUpdateTimeout, "delete": defaultDeleteTimeout} {
		checkTimeoutDefault(t, "artemis_queue_transfer", attrs["timeouts"], name, want)
	}
	var ret resource.SchemaResponse
	NewTransferReturnResource().Schema(ctx, resource.SchemaRequest{}, &ret)
	checkTimeoutDefault(t, "artemis_transfer_return", ret.Schema.Attributes["timeouts"], "create", defaultReturnTimeout)
}

// checkTimeoutDefault checks that the description of timeout name of a timeouts attribute
// states the default the resource uses, want.
func checkTimeoutDefault(t *testing.T, resourceType string, timeouts rschema.Attribute, name string, want time.Duration) {
	t.Helper()
	nested, ok := timeouts.(rschema.SingleNestedAttribute)
	if !ok {
		t.Fatalf("%s has no timeouts attribute", resourceType)
	}
	attr, ok := nested.Attributes[name]
	if !ok {
		t.Fatalf("%s has no %s timeout", resourceType, name)
	}
	desc := attr.GetMarkdownDescription() + attr.GetDescription()
	m := regexp.MustCompile("Default `(\\d+[hm])`\\.").FindStringSubmatch(desc)
	if m == nil {
		t.Fatalf("%s: the %s timeout's description states no default: %s", resourceType, name, desc)
	}
	if d, _ := time.ParseDuration(m[1]); d != want {
		t.Errorf("%s: the %s timeout's description says %s; the resource uses %s", resourceType, name, m[1], want)
	}
}

// statedDefault returns the value of "Defaults to `X`" or "Defaults to N" in a description.
func statedDefault(t *testing.T, what, desc string) string {
	t.Helper()
	m := regexp.MustCompile("Defaults to `?([^`;,. ]+)`?").FindStringSubmatch(desc)
	if m == nil {
		t.Fatalf("%s's description states no default: %s", what, desc)
	}
	return m[1]
}

func TestProviderAndDataSourceDocs_StateTheDefaultsTheCodeUses(t *testing.T) {
	var resp provider.SchemaResponse
	New("test")().Schema(context.Background(), provider.SchemaRequest{}, &resp)
	broker := resp.Schema.Attributes["brokers"].(providerschema.MapNestedAttribute).NestedObject.Attributes
	for _, tc := range []struct {
		attr string
		want time.Duration
	}{
		{"connect_timeout", artemis.DefaultConnectTimeout},
		{"request_timeout", artemis.DefaultRequestTimeout},
	} {
		stated := statedDefault(t, tc.attr, broker[tc.attr].GetMarkdownDescription())
		if d, err := time.ParseDuration(stated); err != nil || d != tc.want {
			t.Errorf("%s's description says the default is %s; the client uses %s", tc.attr, stated, tc.want)
		}
	}

	limit := statedDefault(t, "artemis_transfer_runs.limit", transferRunsSchema(t).Attributes["limit"].GetMarkdownDescription())
	if limit != strconv.Itoa(transferRunsDefaultLimit) {
		t.Errorf("artemis_transfer_runs.limit's description says the default is %s; the data source reads %d", limit, transferRunsDefaultLimit)
	}
}

// envLiteral is a whole string literal naming one of the provider's environment variables.
var envLiteral = regexp.MustCompile(`^"(ARTEMIS_[A-Z][A-Z0-9_]*)"$`)

// The README's table of the environment the provider reads names every variable the provider's
// code names (in the files a release builds, so not the fault harness's hooks), and no other.
func TestReadmeEnvironmentTable_NamesEveryVariableTheProviderReads(t *testing.T) {
	pkg, err := build.Default.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	var inCode []string
	fset := token.NewFileSet()
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if m := envLiteral.FindStringSubmatch(lit.Value); m != nil && !slices.Contains(inCode, m[1]) {
					inCode = append(inCode, m[1])
				}
			}
			return true
		})
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "### Provider configuration from the environment")
	if start < 0 {
		t.Fatal("README.md has no section \"Provider configuration from the environment\"")
	}
	var inTable []string
	for _, line := range strings.Split(text[start:], "\n")[1:] {
		if strings.HasPrefix(line, "#") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, v := range codeSpans(cells[2]) {
			if strings.HasPrefix(v, "ARTEMIS_") && !strings.Contains(v, "<NAME>") {
				inTable = append(inTable, v)
			}
		}
	}
	if len(inCode) == 0 {
		t.Fatal("found no ARTEMIS_ variable in the provider's code: the test reads the wrong files")
	}
	if got, want := sorted(inTable), sorted(inCode); !slices.Equal(got, want) {
		t.Errorf("README.md's environment table names %v; the provider's code reads %v", got, want)
	}
}
