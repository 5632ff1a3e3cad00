package collector

func init() {
	registerCollector("hyperindexes", true, "hyperindex loaded/unloaded state from events",
		func() subCollector { return hyperindexesCollector{} })
}

// hyperindexesCollector emits indexima_hyperindex_loaded{index}, from the
// latest HYPER_INDEX_LOADED / HYPER_INDEX_UNLOADED of each index.
type hyperindexesCollector struct{}

func (hyperindexesCollector) update(v *nodeView) error {
	for _, name := range sortedKeys(v, v.st.Indexes) {
		v.gauge(v.d.hyperindex, boolValue(v.st.Indexes[name].Loaded), name)
	}
	return v.res.Err
}

// hyperindexesDescs are the descriptors of the hyperindexes collector's series.
type hyperindexesDescs struct {
	hyperindex *seriesDesc
}

func newHyperindexesDescs(node nodeDesc) hyperindexesDescs {
	return hyperindexesDescs{
		hyperindex: node(namespace+"_hyperindex_loaded",
			"1 if the hyperindex is loaded on the node, 0 if unloaded, from the latest HYPER_INDEX_LOADED or HYPER_INDEX_UNLOADED event.", labelIndex),
	}
}
