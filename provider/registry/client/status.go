package client

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Status is what a Client or a Registrar reports about its link to the
// controller.
type Status struct {
	// Controller is the controller's base URL.
	Controller string `json:"controller"`
	// Connected: a Client's socket is open (and its instance registered,
	// when it registers); a Registrar's last registration or heartbeat
	// succeeded.
	Connected bool `json:"connected"`
	// RuntimeInstanceID is the id the controller gave the instance; ""
	// before the first registration, or for a Client that only discovers.
	RuntimeInstanceID string `json:"runtimeInstanceId,omitempty"`
	// Synced (a Client only): connected, and the snapshot of every
	// followed service has arrived on the current connection, so the
	// mirror reflects the controller. After a reconnection, or a
	// SetServices with a new service, it is false until then.
	Synced bool `json:"synced,omitempty"`
	// Reconnects counts the times the link came back after a failure:
	// connections after the first (a Registrar: successful registrations
	// or heartbeats after a failed one).
	Reconnects int `json:"reconnects"`
	// LastError is the latest failure, if any, and LastErrorAt its time.
	// They stay after a success: Connected says whether it is over.
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
}

// tracker keeps the status and the metrics of one client.
type tracker struct {
	mu       sync.Mutex
	st       Status
	attempts int // times it became connected

	connected prometheus.Gauge
	reconnect prometheus.Counter
	errs      prometheus.Counter
	lastErr   prometheus.Gauge
}

func newTracker(cfg config, controller endpoint) (*tracker, error) {
	t := &tracker{st: Status{Controller: controller.String()}}
	if cfg.metrics == nil {
		return t, nil
	}
	labels := prometheus.Labels{"client": cfg.name}
	t.connected = prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_registry_client_connected", ConstLabels: labels,
		Help: "1 while the client is connected to its controller (and registered, when it registers), else 0."})
	t.reconnect = prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_registry_client_reconnects_total", ConstLabels: labels,
		Help: "Times the link to the controller came back after a failure."})
	t.errs = prometheus.NewCounter(prometheus.CounterOpts{Name: "switchyard_registry_client_errors_total", ConstLabels: labels,
		Help: "Failed attempts to connect, register, heartbeat, and connections lost."})
	t.lastErr = prometheus.NewGauge(prometheus.GaugeOpts{Name: "switchyard_registry_client_last_error_timestamp_seconds", ConstLabels: labels,
		Help: "Unix time of the latest failure, 0 if none."})
	for _, c := range []prometheus.Collector{t.connected, t.reconnect, t.errs, t.lastErr} {
		if err := cfg.metrics.Register(c); err != nil {
			var already prometheus.AlreadyRegisteredError
			if errors.As(err, &already) {
				return nil, fmt.Errorf("registry client %s: metrics already registered: give each client its own WithName", cfg.name)
			}
			return nil, fmt.Errorf("registry client %s: register metrics: %w", cfg.name, err)
		}
	}
	return t, nil
}

func (t *tracker) status() Status {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.st
}

// up records a successful connection or registration.
func (t *tracker) up(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if id != "" {
		t.st.RuntimeInstanceID = id
	}
	if t.st.Connected {
		return
	}
	t.st.Connected = true
	t.attempts++
	if t.attempts > 1 {
		t.st.Reconnects++
		if t.reconnect != nil {
			t.reconnect.Inc()
		}
	}
	if t.connected != nil {
		t.connected.Set(1)
	}
}

// down records a failure; err is nil when the link ended for no fault
// (the client stopping).
func (t *tracker) down(err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.st.Connected = false
	if t.connected != nil {
		t.connected.Set(0)
	}
	if err == nil {
		return
	}
	t.st.LastError, t.st.LastErrorAt = err.Error(), time.Now()
	if t.errs != nil {
		t.errs.Inc()
		t.lastErr.Set(float64(t.st.LastErrorAt.UnixNano()) / 1e9)
	}
}
