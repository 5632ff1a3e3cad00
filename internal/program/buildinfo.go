package program

import (
	"runtime/debug"
	"strings"
	"time"

	"github.com/prometheus/common/version"
)

// prometheus/common/version is filled by linker flags (-X), which `make
// build`, `make release` and the image set. A plain `go build` or `go install
// MODULE@v0.1.0` sets none, yet Go records the module version and the VCS
// state (revision, commit time, modified) in every binary: without linker
// flags, --version, the landing page and indexima_exporter_build_info take
// them from there instead of showing an empty version.
func init() {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return
	}
	applyBuildInfo(fromBuildInfo(bi))
}

// buildVersion is what the embedded build information tells of a binary.
type buildVersion struct {
	Version   string // module version without its "v": 0.1.0, 0.0.0-20261123175000-6bffc67abcde+dirty, (devel)
	Revision  string // VCS revision, "-modified" appended when the tree had changes
	BuildDate string // VCS commit time, as the Makefile formats build dates
}

// fromBuildInfo reads the module version and the vcs.* settings Go stamps
// (go build -buildvcs, the default in a checkout).
func fromBuildInfo(bi *debug.BuildInfo) buildVersion {
	var b buildVersion
	if v := bi.Main.Version; v != "" {
		// Prometheus projects print versions without the tag's "v".
		b.Version = strings.TrimPrefix(v, "v")
	}
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			if t, err := time.Parse(time.RFC3339, s.Value); err == nil {
				b.BuildDate = t.UTC().Format("20060102-15:04:05")
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && b.Revision != "" {
		b.Revision += "-modified"
	}
	return b
}

// applyBuildInfo fills the version variables that no linker flag set: a
// stamped release keeps exactly what it was stamped with.
func applyBuildInfo(b buildVersion) {
	if version.Version != "" {
		return
	}
	version.Version = b.Version
	if version.Revision == "" {
		version.Revision = b.Revision
	}
	if version.BuildDate == "" {
		version.BuildDate = b.BuildDate
	}
}
