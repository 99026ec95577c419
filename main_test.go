package main

import (
	"testing"

	"github.com/artemis-studio/terraform-provider-artemis/internal/transfer"
)

func TestMemoryLimit_DefaultInFlightPlusHeadroomUnlessGOMEMLIMITIsSet(t *testing.T) {
	tests := []struct {
		name      string
		env       map[string]string
		wantLimit int64
		wantSet   bool
	}{
		{name: "no GOMEMLIMIT", env: map[string]string{}, wantLimit: transfer.DefaultMaxInFlightBytes + transfer.MemoryHeadroom, wantSet: true},
		{name: "operator's GOMEMLIMIT", env: map[string]string{"GOMEMLIMIT": "200MiB"}, wantSet: false},
		{name: "GOMEMLIMIT=off", env: map[string]string{"GOMEMLIMIT": "off"}, wantSet: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			limit, set := memoryLimit(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if set != tt.wantSet || limit != tt.wantLimit {
				t.Errorf("memoryLimit = %d, %v; want %d, %v", limit, set, tt.wantLimit, tt.wantSet)
			}
		})
	}
}

func TestVersionLine_NamesTheVersionAndCommitTheReleaseSet(t *testing.T) {
	defer func(v, c string) { version, commit = v, c }(version, commit)
	version, commit = "0.1.0", "50597b1"
	if got, want := versionLine(), "terraform-provider-artemis 0.1.0 (commit 50597b1)"; got != want {
		t.Errorf("versionLine() = %q; want %q", got, want)
	}
}
