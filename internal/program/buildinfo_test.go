package program

import (
	"runtime/debug"
	"testing"

	"github.com/prometheus/common/version"
)

func TestFromBuildInfo(t *testing.T) {
	settings := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i+1 < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want buildVersion
	}{
		{
			name: "go install MODULE@v0.1.0: module version, no VCS",
			bi:   debug.BuildInfo{Main: debug.Module{Version: "v0.1.0"}},
			want: buildVersion{Version: "0.1.0"},
		},
		{
			name: "go build in a clean checkout",
			bi: debug.BuildInfo{
				Main: debug.Module{Version: "v0.0.0-20261123175000-6bffc67abcde"},
				Settings: settings("vcs", "git", "vcs.revision", "6bffc67abcde0123456789abcdef0123456789ab",
					"vcs.time", "2026-11-23T17:50:00Z", "vcs.modified", "false"),
			},
			want: buildVersion{Version: "0.0.0-20261123175000-6bffc67abcde", Revision: "6bffc67abcde0123456789abcdef0123456789ab", BuildDate: "20261123-17:50:00"},
		},
		{
			name: "go build with uncommitted changes",
			bi: debug.BuildInfo{
				Main:     debug.Module{Version: "v0.1.1-0.20261201090000-0123456789ab+dirty"},
				Settings: settings("vcs.revision", "0123456789ab", "vcs.time", "2026-12-01T10:00:00+01:00", "vcs.modified", "true"),
			},
			want: buildVersion{Version: "0.1.1-0.20261201090000-0123456789ab+dirty", Revision: "0123456789ab-modified", BuildDate: "20261201-09:00:00"},
		},
		{
			name: "-buildvcs=false outside a module version",
			bi:   debug.BuildInfo{Main: debug.Module{Version: "(devel)"}},
			want: buildVersion{Version: "(devel)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fromBuildInfo(&tc.bi); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestApplyBuildInfoKeepsLinkerFlags: a binary stamped by -ldflags -X
// (make build, make release, the image) reports exactly its stamp.
func TestApplyBuildInfoKeepsLinkerFlags(t *testing.T) {
	saved := [3]string{version.Version, version.Revision, version.BuildDate}
	t.Cleanup(func() { version.Version, version.Revision, version.BuildDate = saved[0], saved[1], saved[2] })
	b := buildVersion{Version: "0.0.0-2026-abc", Revision: "abc-modified", BuildDate: "20261123-17:50:00"}

	version.Version, version.Revision, version.BuildDate = "0.1.0", "release-rev", "20261130-00:00:00"
	applyBuildInfo(b)
	if version.Version != "0.1.0" || version.Revision != "release-rev" || version.BuildDate != "20261130-00:00:00" {
		t.Errorf("linker-set values replaced: %q %q %q", version.Version, version.Revision, version.BuildDate)
	}

	version.Version, version.Revision, version.BuildDate = "", "", ""
	applyBuildInfo(b)
	if version.Version != b.Version || version.Revision != b.Revision || version.BuildDate != b.BuildDate {
		t.Errorf("without linker flags: got %q %q %q, want %+v", version.Version, version.Revision, version.BuildDate, b)
	}
	if got := version.GetRevision(); got != b.Revision {
		t.Errorf("GetRevision (build_info's revision label) = %q, want %q", got, b.Revision)
	}
}
