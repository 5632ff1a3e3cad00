package collector

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

func init() {
	registerCollector("version", true, "node version from get/version, cached",
		func() subCollector { return versionCollector{} })
}

// retryAfterFailure is the shortest wait before an info call that failed is
// tried again (a broken endpoint must not add a call to every poll).
const retryAfterFailure = time.Minute

// versionCollector emits indexima_node_info{version} from get/version,
// called at most every Options.InfoRefresh per node.
type versionCollector struct{}

type versionCache struct {
	version   string // "" until a call succeeded
	fetched   time.Time
	attempted time.Time
}

func (versionCollector) refresh(ctx context.Context, r refreshEnv, prev any) (any, error) {
	c, _ := prev.(versionCache)
	if c.version != "" && r.now.Sub(c.fetched) < r.every {
		return c, nil
	}
	if !c.attempted.IsZero() && r.now.Sub(c.attempted) < min(r.every, retryAfterFailure) {
		return c, nil
	}
	c.attempted = r.now
	info, err := r.api.Version(ctx, r.node.target)
	if err != nil {
		return c, err
	}
	v := sanitizeLabel(info.Version)
	if v == "" {
		v = sanitizeLabel(info.Raw) // shape not understood: show what the node said
	}
	if v == "" {
		v = "unknown"
	}
	c.version, c.fetched = v, r.now
	return c, nil
}

func (versionCollector) update(ch chan<- prometheus.Metric, v *nodeView) error {
	if c, ok := v.caches["version"].(versionCache); ok && c.version != "" {
		v.gauge(ch, v.d.nodeInfo, 1, c.version)
	}
	return v.res.refreshErr["version"]
}
