package deploy

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

// TestComposeAlertmanagerConfig: the stack's Alertmanager runs the
// configuration of deploy/docker-compose, which amtool accepts, whose
// receivers have no integration (nothing in the stack receives a
// notification, so none is attempted and none fails), and which is
// otherwise the shipped deploy/prometheus/alertmanager.yml: same routes,
// grouping, inhibitions and receiver names.
func TestComposeAlertmanagerConfig(t *testing.T) {
	root := testkit.RepoRoot(t)
	composeAM := filepath.Join(root, composeDir, "alertmanager.yml")
	shippedAM := filepath.Join(root, "deploy", "prometheus", "alertmanager.yml")

	// The file checked here is the one the service loads.
	services, _ := composeConfig(t)["services"].(object)
	am := services["alertmanager"]
	var configFile string
	for _, arg := range stringList(dig(am, "command")) {
		if v, ok := strings.CutPrefix(arg, "--config.file="); ok {
			configFile = v
		}
	}
	if configFile == "" {
		t.Fatalf("alertmanager command %v has no --config.file=", stringList(dig(am, "command")))
	}
	if got := binds(t, am)[configFile]; got != composeAM {
		t.Errorf("alertmanager loads %s, mounted from %q; want %s", configFile, got, composeAM)
	}

	amtool := testkit.Tool(t, "amtool", "Debian package prometheus-alertmanager")
	mustRun(t, time.Minute, root, amtool, "check-config", composeAM)

	var compose, shipped object
	readYAML(t, composeAM, &compose)
	readYAML(t, shippedAM, &shipped)
	for _, r := range asList(compose["receivers"]) {
		rm, _ := r.(object)
		for k := range rm {
			if k != "name" {
				t.Errorf("compose alertmanager.yml: receiver %v has %s: nothing in the stack receives it, so every notification would fail", rm["name"], k)
			}
		}
	}
	// The shipped file without its receivers' integrations must be the
	// compose file: a change to the routing of one goes to the other.
	var stripped []any
	for _, r := range asList(shipped["receivers"]) {
		stripped = append(stripped, object{"name": dig(r, "name")})
	}
	if len(stripped) == 0 {
		t.Fatal("the shipped alertmanager.yml has no receivers")
	}
	shipped["receivers"] = stripped
	if !reflect.DeepEqual(compose, shipped) {
		want, _ := yaml.Marshal(shipped)
		got, _ := yaml.Marshal(compose)
		t.Errorf("compose alertmanager.yml differs from deploy/prometheus/alertmanager.yml beyond the receivers' integrations:\ncompose:\n%s\nshipped without integrations:\n%s", got, want)
	}
}
