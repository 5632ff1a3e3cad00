package web

import (
	"net/http"

	"github.com/indexima-exporter/indexima_exporter/config"
)

// ConfigForGET is the configuration in force for a page that answers GET
// (and HEAD) only: another method gets 405, no configuration yet 503; ok
// is false when an answer was written.
func ConfigForGET(w http.ResponseWriter, req *http.Request, configs Configs) (cfg *config.Config, ok bool) {
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "Use GET.", http.StatusMethodNotAllowed)
		return nil, false
	}
	if cfg = configs.Config(); cfg == nil {
		http.Error(w, "No configuration loaded yet.", http.StatusServiceUnavailable)
		return nil, false
	}
	return cfg, true
}
