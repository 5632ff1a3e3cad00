package collector

func init() {
	registerCollector("version", true, "node version from get/version, cached",
		func() subCollector { return versionCollector{} })
}

// versionCollector emits indexima_node_info{version} from get/version,
// which the poller calls at most every InfoRefresh per node while this
// collector is on (poller.InfoCalls).
type versionCollector struct{}

func (versionCollector) update(v *nodeView) error {
	if version := v.info.Version(); version != "" {
		v.gauge(v.d.nodeInfo, 1, version)
	}
	return v.res.VersionErr
}

// versionDescs are the descriptors of the version collector's series.
type versionDescs struct {
	nodeInfo *seriesDesc
}

func newVersionDescs(node nodeDesc) versionDescs {
	return versionDescs{
		nodeInfo: node(namespace+"_node_info",
			"Always 1; the version label is the node's answer to get/version (refreshed periodically).", "version"),
	}
}
