package version

import (
	"testing"

	utilversion "k8s.io/apimachinery/pkg/util/version"
)

func TestGitVersionIsSemverOfTheLibraries(t *testing.T) {
	v, err := utilversion.ParseSemantic(GitVersion())
	if err != nil {
		t.Fatalf("gitVersion %q: %v", GitVersion(), err)
	}
	if v.Major() != 1 || v.Minor() != 37 {
		t.Errorf("got %s, want v1.37.x", v)
	}
	info := EffectiveVersion().Info()
	if info.GitVersion != GitVersion() || info.Major != "1" || info.Minor != "37" {
		t.Errorf("got %+v, want gitVersion %s major 1 minor 37", info, GitVersion())
	}
}
