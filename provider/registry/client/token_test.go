package client_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/switchyard-go/switchyard/provider/registry"
	"github.com/switchyard-go/switchyard/provider/registry/client"
)

// TestTokenNeverShows runs clients with a wrong token and then the right
// one through refusals, a controller restart and a stop, capturing every
// log record at debug level, every status and error, and the metrics, and
// checks that no token appears in any of them.
func TestTokenNeverShows(t *testing.T) {
	const wrong = "wrong-token-7c41e0"
	ctrl := startController(t, "127.0.0.1:0", registry.WithLease(300*time.Millisecond))
	logs := &syncBuffer{}
	metrics := prometheus.NewRegistry()
	var seen []string // statuses and errors

	// Refused: the client keeps trying, saying why.
	bad, err := client.New(ctrl.url(), client.WithName("bad"), client.WithToken(wrong), client.WithLogger(logger(logs)),
		client.WithMetrics(metrics), fast, client.WithRegistration(gateway), client.WithInitialWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	stopBad := run(t, bad)
	eventually(t, "refusal reported", func() bool { return bad.Status().LastError != "" })
	stopBad()
	seen = append(seen, fmt.Sprintf("%+v", bad.Status()))
	if !contains(bad.Status().LastError, "401") {
		t.Errorf("status of a refused client: %+v, want the 401 said", bad.Status())
	}
	badReg, err := client.NewRegistrar(ctrl.url(), backend, client.WithName("bad-registrar"), client.WithToken(wrong),
		client.WithLogger(logger(logs)), client.WithMetrics(metrics), fast, client.WithStartOnRegistryFailure(false),
		client.WithInitialWait(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	if err := badReg.Run(ctx); err == nil {
		t.Error("a registrar with a wrong token registered")
	} else {
		seen = append(seen, err.Error(), fmt.Sprintf("%+v %v", badReg.Status(), badReg.Status()))
	}

	// Accepted, through a restart.
	good, err := client.New(ctrl.url(), client.WithName("good"), client.WithToken(testToken), client.WithLogger(logger(logs)),
		client.WithMetrics(metrics), fast, client.WithRegistration(gateway), client.WithServices("pets"))
	if err != nil {
		t.Fatal(err)
	}
	run(t, good)
	reg, err := client.NewRegistrar(ctrl.url(), backend, client.WithName("registrar"), client.WithToken(testToken),
		client.WithLogger(logger(logs)), client.WithMetrics(metrics), fast)
	if err != nil {
		t.Fatal(err)
	}
	stopReg := run(t, reg)
	waitReady(t, "client", good.Ready())
	waitReady(t, "registrar", reg.Ready())
	ctrl.restart()
	eventually(t, "both back", func() bool {
		st := good.Status()
		return st.Reconnects > 0 && st.Connected && reg.Status().Connected && reg.Status().Reconnects > 0
	}, func() string { return fmt.Sprintf("client %+v, registrar %+v", good.Status(), reg.Status()) })
	stopReg()
	seen = append(seen, fmt.Sprintf("%+v %#v", good.Status(), good.Status()), fmt.Sprintf("%+v", reg.Status()))

	rec := httptest.NewRecorder()
	promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for what, text := range map[string]string{
		"client logs":     logs.String(),
		"controller logs": ctrl.logs.String(),
		"statuses":        strings.Join(seen, "\n"),
		"metrics":         rec.Body.String(),
	} {
		if text == "" {
			t.Errorf("%s: nothing captured", what)
		}
		for _, token := range []string{testToken, wrong} {
			if strings.Contains(text, token) {
				t.Errorf("%s show a token:\n%s", what, text)
			}
		}
	}
	if !contains(rec.Body.String(), `switchyard_registry_client_reconnects_total{client="good"} 1`) {
		t.Errorf("metrics lack the reconnection of good:\n%s", rec.Body.String())
	}
}
