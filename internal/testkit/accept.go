package testkit

// ScrapeAccept is one Accept header a tested Prometheus line sends when it
// scrapes, what makes it send that header, and the Content-Type the
// exporter must answer (promhttp's negotiation over prometheus/common's
// formats: OpenMetrics 1.0.0 and 0.0.1, protobuf, text 0.0.4 and 1.0.0; the
// escaping= of the chosen clause, else underscores).
type ScrapeAccept struct {
	// Line is the PrometheusLine's Name: "2.42" or "3.15".
	Line string
	// Name tells the header apart in test and job names.
	Name string
	// Flags are Prometheus command-line flags, and Job lines of its scrape
	// job (indented by four spaces), that make it send Accept.
	Flags []string
	Job   string
	// Accept is the header, byte for byte.
	Accept string
	// ContentType is the exporter's answer.
	ContentType string
}

// The Content-Types the exporter answers.
const (
	ctOpenMetrics1   = "application/openmetrics-text; version=1.0.0; charset=utf-8; escaping="
	ctOpenMetrics001 = "application/openmetrics-text; version=0.0.1; charset=utf-8; escaping="
	ctProtobuf       = "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; escaping="
	ctText1          = "text/plain; version=1.0.0; charset=utf-8; escaping="
	ctText004        = "text/plain; version=0.0.4; charset=utf-8; escaping="
	protoAccept      = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
)

// ScrapeAccepts are the Accept headers of the tested lines.
//
// 2.42 sends one of two constants of its scrape/scrape.go (v2.42.0, also
// found in Debian's binary): scrapeAcceptHeader, and
// scrapeAcceptHeaderWithProtobuf under --enable-feature=native-histograms.
// It has no scrape_protocols.
//
// 3.15 builds the header from the job's scrape_protocols (acceptHeader in
// scrape/scrape.go, github.com/prometheus/prometheus v0.315.0): each
// protocol's entry of config.ScrapeProtocolsHeaders, weighted from q=0.7
// down (six known protocols, plus one), then */*; the text formats 1.0.0
// carry escaping= the job's metric_name_escaping_scheme (allow-utf-8 by
// default). Without scrape_protocols it uses DefaultScrapeProtocols
// (OpenMetrics 1.0.0 and 0.0.1, text 1.0.0 and 0.0.4), or, with
// scrape_native_histograms, DefaultProtoFirstScrapeProtocols (protobuf
// first).
var ScrapeAccepts = []ScrapeAccept{
	{Line: "2.42", Name: "default",
		Accept:      "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		ContentType: ctOpenMetrics1 + "underscores"},
	{Line: "2.42", Name: "native_histograms", Flags: []string{"--enable-feature=native-histograms"},
		Accept:      protoAccept + ",application/openmetrics-text;version=1.0.0;q=0.8,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		ContentType: ctProtobuf + "underscores"},

	{Line: "3.15", Name: "default",
		Accept:      "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7,application/openmetrics-text;version=0.0.1;q=0.6,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.5,text/plain;version=0.0.4;q=0.4,*/*;q=0.3",
		ContentType: ctOpenMetrics1 + "allow-utf-8"},
	{Line: "3.15", Name: "native_histograms", Job: "    scrape_native_histograms: true\n",
		Accept:      protoAccept + ";q=0.7,application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
		ContentType: ctProtobuf + "underscores"},
	{Line: "3.15", Name: "openmetrics_1_0_0", Job: "    scrape_protocols: [OpenMetricsText1.0.0]\n",
		Accept:      "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.7,*/*;q=0.6",
		ContentType: ctOpenMetrics1 + "allow-utf-8"},
	{Line: "3.15", Name: "openmetrics_0_0_1", Job: "    scrape_protocols: [OpenMetricsText0.0.1]\n",
		Accept:      "application/openmetrics-text;version=0.0.1;q=0.7,*/*;q=0.6",
		ContentType: ctOpenMetrics001 + "underscores"},
	{Line: "3.15", Name: "protobuf", Job: "    scrape_protocols: [PrometheusProto]\n",
		Accept:      protoAccept + ";q=0.7,*/*;q=0.6",
		ContentType: ctProtobuf + "underscores"},
	{Line: "3.15", Name: "text_1_0_0", Job: "    scrape_protocols: [PrometheusText1.0.0]\n",
		Accept:      "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.7,*/*;q=0.6",
		ContentType: ctText1 + "allow-utf-8"},
	{Line: "3.15", Name: "text_1_0_0_underscores", Job: "    scrape_protocols: [PrometheusText1.0.0]\n    metric_name_escaping_scheme: underscores\n",
		Accept:      "text/plain;version=1.0.0;escaping=underscores;q=0.7,*/*;q=0.6",
		ContentType: ctText1 + "underscores"},
	{Line: "3.15", Name: "text_1_0_0_dots", Job: "    scrape_protocols: [PrometheusText1.0.0]\n    metric_name_escaping_scheme: dots\n",
		Accept:      "text/plain;version=1.0.0;escaping=dots;q=0.7,*/*;q=0.6",
		ContentType: ctText1 + "dots"},
	{Line: "3.15", Name: "text_1_0_0_values", Job: "    scrape_protocols: [PrometheusText1.0.0]\n    metric_name_escaping_scheme: values\n",
		Accept:      "text/plain;version=1.0.0;escaping=values;q=0.7,*/*;q=0.6",
		ContentType: ctText1 + "values"},
	{Line: "3.15", Name: "text_0_0_4", Job: "    scrape_protocols: [PrometheusText0.0.4]\n",
		Accept:      "text/plain;version=0.0.4;q=0.7,*/*;q=0.6",
		ContentType: ctText004 + "underscores"},
}
