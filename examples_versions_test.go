package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// changelogHeading is a version heading of CHANGELOG.md, released ("## 0.1.0 (December 7, 2026)")
// or not ("## 0.1.0 (Unreleased)"); make install reads the first one the same way.
var changelogHeading = regexp.MustCompile(`(?m)^## (\d+)\.(\d+)\.(\d+) \(`)

// changelogVersion returns the newest version of CHANGELOG.md, the one make install builds, and
// the constraint every configuration of this repository declares for it: "~> MAJOR.MINOR".
func changelogVersion(t *testing.T) (version, constraint string) {
	t.Helper()
	raw, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	m := changelogHeading.FindStringSubmatch(string(raw))
	if m == nil {
		t.Fatal("CHANGELOG.md has no version heading such as '## 0.1.0 (Unreleased)'")
	}
	return m[1] + "." + m[2] + "." + m[3], "~> " + m[1] + "." + m[2]
}

// artemisRequirement is the artemis entry of a required_providers block, as the examples write it.
var artemisRequirement = regexp.MustCompile(`(?s)required_providers\s*\{.*?\bartemis\s*=\s*\{([^}]*)\}`)

var (
	requirementSource  = regexp.MustCompile(`\bsource\s*=\s*"([^"]*)"`)
	requirementVersion = regexp.MustCompile(`\bversion\s*=\s*"([^"]*)"`)
)

// checkRequirement reports a configuration text whose artemis requirement is missing or names
// another source or version than CHANGELOG.md's.
func checkRequirement(t *testing.T, name, text, version, constraint string) {
	t.Helper()
	m := artemisRequirement.FindStringSubmatch(text)
	if m == nil {
		t.Errorf("%s: no required_providers entry for artemis: declare source %q and version %q", name,
			"artemis-studio/artemis", constraint)
		return
	}
	src, ver := requirementSource.FindStringSubmatch(m[1]), requirementVersion.FindStringSubmatch(m[1])
	if src == nil || (src[1] != "artemis-studio/artemis" && src[1] != "registry.terraform.io/artemis-studio/artemis") {
		t.Errorf("%s: artemis's source is %v, want \"artemis-studio/artemis\" (or with its host, registry.terraform.io/)", name, src)
	}
	if ver == nil || ver[1] != constraint {
		got := "none"
		if ver != nil {
			got = ver[1]
		}
		t.Errorf("%s: artemis's version constraint is %s, want %q, for %s, the newest version of CHANGELOG.md", name, got,
			constraint, version)
	}
}

// Every configuration that declares the provider, and the README's required_providers block, ask
// for the version CHANGELOG.md is at, so that none falls behind a new minor version (which may
// change the schema before 1.0.0) unnoticed.
func TestExamples_EveryRequiredProvidersAsksForTheChangelogVersion(t *testing.T) {
	version, constraint := changelogVersion(t)
	var versionFiles int
	err := filepath.WalkDir("examples", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".tf" {
			return err
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if d.Name() == "versions.tf" || strings.Contains(string(raw), "required_providers") {
			checkRequirement(t, path, string(raw), version, constraint)
		}
		if d.Name() == "versions.tf" {
			versionFiles++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if versionFiles == 0 {
		t.Fatal("no examples/**/versions.tf found: the walk would prove nothing")
	}
	checkRequirement(t, "README.md", readmeBlock(t, "terraform", "required_providers"), version, constraint)
}

// providerBlock starts the provider's configuration: a file with one is a whole configuration.
var providerBlock = regexp.MustCompile(`(?m)^provider "artemis"`)

// tffileArg is a file a docs template embeds by path with tfplugindocs's tffile.
var tffileArg = regexp.MustCompile(`\{\{\s*tffile\s+"([^"]+)"\s*\}\}`)

// Every configuration a page of the docs embeds whole (one with a provider block, not a snippet
// such as an import block) has a versions.tf beside it, so that the page can show which provider
// and version it is for, and the check above keeps that version current.
func TestExamples_EveryEmbeddedConfigurationHasAVersionsFile(t *testing.T) {
	templates, err := filepath.Glob("templates/*.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("templates/*/*.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	embedded := map[string][]string{
		// index.md.tmpl embeds it as .ExampleFile, tfplugindocs's name for it.
		"examples/provider/provider.tf": {"templates/index.md.tmpl"},
	}
	for _, tmpl := range append(templates, more...) {
		raw, err := os.ReadFile(tmpl)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range tffileArg.FindAllStringSubmatch(string(raw), -1) {
			embedded[m[1]] = append(embedded[m[1]], tmpl)
		}
	}
	var configurations int
	for file, by := range embedded {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s, embedded by %s: %v", file, strings.Join(by, ", "), err)
			continue
		}
		if !providerBlock.Match(raw) {
			continue
		}
		configurations++
		if _, err := os.Stat(filepath.Join(filepath.Dir(file), "versions.tf")); err != nil {
			t.Errorf("%s, embedded by %s, configures the provider but %s has no versions.tf: add one with the "+
				"required_providers block of examples/provider/versions.tf, and embed it in the page", file,
				strings.Join(by, ", "), filepath.Dir(file))
		}
	}
	if configurations == 0 {
		t.Fatal("no embedded configuration found: the check would prove nothing")
	}
}
