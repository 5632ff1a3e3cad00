package integration

import (
	"path/filepath"
	"testing"
	"time"
)

// With --events.state-file a restarted exporter resumes: events that
// happened while it was down are counted, and nothing counted before is
// counted again (counters continue from the first contact of the first run).
func TestRestartWithStateFileResumes(t *testing.T) {
	const password = "Pa55word"
	c := newCluster(t, 2, password)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "password")
	writeSecret(t, pwFile, password)
	cfgFile := filepath.Join(dir, "indexima.yml")
	nodes := []string{nodeName(1), nodeName(2)}
	c.writeConfig(cfgFile, pwFile, nodes...)
	args := []string{"--config.file=" + cfgFile, "--events.state-file=" + filepath.Join(dir, "state.json")}

	e := startExporter(t, args...)
	s := e.scrape()
	c.observe(s, nodes...)
	c.advance(20 * time.Second)
	c.sim.ReportNodeDown(nodeKey(nodes[0]), nodeKey(nodes[1]))
	c.sim.MemoryLowEpisode(nodeKey(nodes[1]))
	c.advance(time.Second)
	s = e.scrape()
	c.observe(s, nodes...)
	c.verify(s, "first run", nodes...)
	e.stop()

	// While the exporter is down.
	c.advance(30 * time.Second)
	c.sim.StopCluster()
	c.advance(10 * time.Second)
	c.sim.StartCluster()
	c.advance(time.Minute)

	e = startExporter(t, args...)
	s = e.scrape()
	c.observe(s, nodes...) // first contact stays the first run's
	c.verify(s, "after restart", nodes...)
}
