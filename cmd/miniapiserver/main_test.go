package main

import (
	"strings"
	"testing"
)

func TestFlagErrorsStopBeforeStarting(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown gate", []string{"--feature-gates=NoSuchGate=true"}, "unrecognized feature gate: NoSuchGate"},
		{"unknown flag", []string{"--no-such-flag"}, "unknown flag"},
		{"stray argument", []string{"serve"}, "unexpected arguments"},
		{"bad bind address", []string{"--bind-address=nowhere", "--data-dir=" + t.TempDir()}, "not an IP address"},
		{"bad port", []string{"--secure-port=70000", "--data-dir=" + t.TempDir()}, "--secure-port"},
		{"short history window", []string{"--watch-cache-history-window=10s", "--data-dir=" + t.TempDir()}, "--watch-cache-history-window"},
		{"empty history", []string{"--watch-cache-history-size=0", "--data-dir=" + t.TempDir()}, "--watch-cache-history-size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t.Context(), tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("run(%q): got %v, want an error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestVersionFlag(t *testing.T) {
	if err := run(t.Context(), []string{"--version"}); err != nil {
		t.Errorf("--version: got %v", err)
	}
}
