package deploy

import (
	"testing"

	"github.com/indexima-exporter/indexima_exporter/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }
