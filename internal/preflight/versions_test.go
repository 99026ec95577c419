package preflight

import (
	"os"
	"strings"
	"testing"
)

func TestCheck_RefusesABrokerOlderThanTheMinimumVersion(t *testing.T) {
	checkRule(t, summaryBrokerTooOld, []ruleCase{
		{name: "both newest"},
		{name: "both at the minimum", edit: func(f *Facts) { f.SourceBroker.Version, f.TargetBroker.Version = "2.18.0", "2.18.0" }},
		{name: "a snapshot of the minimum", edit: func(f *Facts) { f.TargetBroker.Version = "2.18.0-SNAPSHOT" }},
		{name: "a later major version", edit: func(f *Facts) { f.SourceBroker.Version = "3.0.0" }},
		{name: "source too old", edit: func(f *Facts) { f.SourceBroker.Version = "2.17.0" },
			want: refusal("source.broker", `"eu"`, "Artemis 2.17.0", "Artemis "+minimumArtemisVersion+" and later", "Upgrade broker \"eu\"")},
		{name: "target too old", edit: func(f *Facts) { f.TargetBroker.Version = "2.9.0" },
			want: refusal("target.broker", `"us"`, "Artemis 2.9.0", "Artemis "+minimumArtemisVersion+" and later", "point target.broker at another broker")},
		{name: "an ActiveMQ 1.x version", edit: func(f *Facts) { f.TargetBroker.Version = "1.5.6" },
			want: refusal("target.broker", `"us"`, "Artemis 1.5.6")},
		{name: "a version that does not parse", edit: func(f *Facts) { f.SourceBroker.Version = "unknown" }},
		{name: "no version reported", edit: func(f *Facts) { f.TargetBroker.Version = "" }},
	})
}

func TestCheck_RefusesAnOldBrokerAtBothEndsOnceOnTheSource(t *testing.T) {
	f := typical()
	f.Target.Broker = f.Source.Broker
	f.SourceBroker.Version, f.TargetBroker.Version = "2.16.0", "2.16.0"
	got := withSummary(Check(f), summaryBrokerTooOld)
	if len(got) != 1 || got[0].Attribute != "source.broker" {
		t.Fatalf("want one refusal on source.broker, got %+v", got)
	}
}

func TestCheckCopy_RefusesABrokerOlderThanTheMinimumVersion(t *testing.T) {
	f := typical()
	f.SourceBroker.Version = "2.17.0"
	got := withSummary(CheckCopy(f, CopyFacts{}), summaryBrokerTooOld)
	if len(got) != 1 || got[0].Severity != Error || got[0].Attribute != "source.broker" {
		t.Fatalf("a copy: want one refusal on source.broker, got %+v", got)
	}
}

// The supported-versions guide and make test-versions state the minimum this package enforces.
func TestMinimumArtemisVersion_IsTheOneTheGuideAndMakeTestVersionsName(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"../../templates/guides/supported-versions.md.tmpl", "**" + minimumArtemisVersion + ", is the oldest version the provider supports**"},
		{"../../templates/guides/supported-versions.md.tmpl", "| " + minimumArtemisVersion + " and later; a plan refuses an older source or target broker |"},
		{"../../scripts/test-versions.sh", `VERSIONS=${TEST_VERSIONS:-` + minimumArtemisVersion + " "},
	} {
		text, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), c.want) {
			t.Errorf("%s does not say %q", c.file, c.want)
		}
	}
}
