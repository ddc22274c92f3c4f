package registry

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

func TestAddressPolicy(t *testing.T) {
	control := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9090}
	tests := []struct {
		name    string
		policy  AddressPolicy
		address string
		port    int
		local   net.Addr
		refused string // part of the reason; "" when accepted
	}{
		{"an ordinary address", AddressPolicy{}, "10.0.0.1", 8080, control, ""},
		{"loopback, another port", AddressPolicy{}, "127.0.0.1", 7001, control, ""},
		{"a host name", AddressPolicy{}, "api.internal", 80, control, ""},
		{"metadata service", AddressPolicy{}, "169.254.169.254", 80, control, "link-local"},
		{"IPv6 link-local", AddressPolicy{}, "fe80::1", 80, control, "link-local"},
		{"IPv4-mapped link-local", AddressPolicy{}, "::ffff:169.254.169.254", 80, control, "link-local"},
		{"link-local allowed", AddressPolicy{AllowLinkLocal: true}, "169.254.1.1", 80, control, ""},
		{"unspecified", AddressPolicy{AllowLinkLocal: true, AllowControlPlane: true}, "0.0.0.0", 80, control, "unspecified"},
		{"unspecified IPv6", AddressPolicy{}, "::", 80, control, "unspecified"},
		{"multicast", AddressPolicy{}, "ff02::1", 80, control, "multicast"},
		{"the control plane", AddressPolicy{}, "127.0.0.1", 9090, control, "registry's own"},
		{"the control plane at another loopback address", AddressPolicy{}, "127.0.0.2", 9090, control, "registry's own"},
		{"the control plane as localhost", AddressPolicy{}, "localhost", 9090, control, "registry's own"},
		{"the control plane as LOCALHOST.", AddressPolicy{}, "LOCALHOST.", 9090, control, "registry's own"},
		{"the control plane as ::1", AddressPolicy{}, "::1", 9090, control, "registry's own"},
		{"the control plane allowed", AddressPolicy{AllowControlPlane: true}, "127.0.0.1", 9090, control, ""},
		{"its port elsewhere", AddressPolicy{}, "10.9.9.9", 9090, control, ""},
		{"not over the network", AddressPolicy{}, "127.0.0.1", 9090, nil, ""},
		{"a denied network", AddressPolicy{Deny: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}, "10.1.2.3", 80, control, "refuses"},
		{"outside a denied network", AddressPolicy{Deny: []netip.Prefix{netip.MustParsePrefix("10.1.0.0/16")}}, "10.2.2.3", 80, control, ""},
		{"a denied endpoint", AddressPolicy{DenyEndpoints: []netip.AddrPort{netip.MustParseAddrPort("127.0.0.1:8080")}}, "127.0.0.1", 8080, control, "another server"},
		{"a denied endpoint on every address", AddressPolicy{DenyEndpoints: []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:8080")}}, "127.0.0.3", 8080, control, "another server"},
		{"a denied endpoint's port elsewhere", AddressPolicy{DenyEndpoints: []netip.AddrPort{netip.MustParseAddrPort("0.0.0.0:8080")}}, "10.0.0.1", 8080, control, ""},
		{"host names denied", AddressPolicy{DenyHostNames: true}, "api.internal", 80, control, "host names"},
		{"outside the allowed networks", AddressPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "192.168.1.1", 80, control, "not in the networks"},
		{"inside the allowed networks", AddressPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "10.3.1.1", 80, control, ""},
		{"a host name with allowed networks", AddressPolicy{Allow: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, "api", 80, control, "host names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.policy.check(tt.address, tt.port, tt.local)
			if tt.refused == "" && got != "" || tt.refused != "" && !strings.Contains(got, tt.refused) {
				t.Errorf("check(%s, %d) = %q, want %q", tt.address, tt.port, got, tt.refused)
			}
		})
	}
}

// Registering the registry's own address over HTTP and WebSocket is
// refused with 403 / CodeForbidden, and counted.
func TestControlPlaneAddressRefused(t *testing.T) {
	f := start(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(f.srv.URL, "http://"))
	p, _ := strconv.Atoi(port)
	body := `{"serviceId":"evil","protocol":"http","address":"127.0.0.1","port":` + port + `}`
	status, resp := f.do("POST", "/v1/services", testToken, "application/json", body)
	if status != http.StatusForbidden || !strings.Contains(resp, `"field":"address"`) || !strings.Contains(resp, "registry's own") {
		t.Errorf("registering the control plane over HTTP: %d %s, want 403 naming the address", status, resp)
	}
	ms := f.dial("/ws/microservice", testToken)
	m := ms.call("service/register", map[string]any{"serviceId": "evil", "protocol": "http", "address": "localhost", "port": p})
	if m.Error == nil || m.Error.Code != CodeForbidden || m.Error.Data == nil || m.Error.Data.Field != "address" {
		t.Errorf("registering the control plane over WebSocket: %+v, want CodeForbidden on the address", m)
	}
	// The socket stays open: another registration works.
	var reg struct{ RuntimeInstanceID string }
	ms.result("service/register", map[string]any{"serviceId": "good", "protocol": "http", "address": "127.0.0.1", "port": 7001}, &reg)
	if got := f.r.Counters().Forbidden; got != 2 {
		t.Errorf("Counters().Forbidden = %d, want 2", got)
	}
	if _, err := f.r.Register(Registration{ServiceID: "a", Protocol: "http", Address: "169.254.169.254", Port: 80}); err == nil || !strings.Contains(err.Error(), "link-local") {
		t.Errorf("Register of a link-local address: %v, want refused", err)
	}
}
