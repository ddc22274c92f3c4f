package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// TestBinaryNeverShowsTheTokens runs the real binary with distinctive
// tokens and its log at debug level, goes through every listener —
// registrations and refusals on the control address, routed requests and
// upstream failures on the gateway, every page of the admin address,
// WebSockets — stops it, and checks that no output shows either token:
// not stdout, not stderr, not one answer.
func TestBinaryNeverShowsTheTokens(t *testing.T) {
	bin := buildBinary(t)
	const token, discoveryToken = "tok-registration-7f3a9c2e51", "tok-discovery-b84d06e1f9"
	gw, ctl, adm := freeAddr(t), freeAddr(t), freeAddr(t)
	p := startProcess(t, "binary", bin, []string{"SWITCHYARD_TOKEN=" + token, "SWITCHYARD_DISCOVERY_TOKEN=" + discoveryToken},
		"-gateway-addr", gw, "-control-addr", ctl, "-admin-addr", adm, "-log-level", "debug", "-lease", "1s")
	p.waitLine("route resolved        petstore")

	var answers []string
	call := func(method, url, auth, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := testClient.Do(req)
		if err != nil {
			answers = append(answers, err.Error())
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answers = append(answers, fmt.Sprint(resp.Status, resp.Header, string(b)))
	}
	reg := func(port string) string {
		return `{"serviceId":"inventory","protocol":"http","address":"127.0.0.1","port":` + port + `}`
	}
	call("POST", "http://"+ctl+"/v1/services", token, reg(strings.Split(freeAddr(t), ":")[1])) // nothing listens there
	call("POST", "http://"+ctl+"/v1/services", token+"-wrong", reg("7002"))
	call("POST", "http://"+ctl+"/v1/services", discoveryToken, reg("7003"))
	call("POST", "http://"+ctl+"/v1/services", token, `{"serviceId":"x","protocol":"http","address":"169.254.169.254","port":80,"tags":{"token":"`+token+`"}}`)
	call("PUT", "http://"+ctl+"/v1/services/0123456789abcdef0123456789abcdef/heartbeat", token, "")
	call("GET", "http://"+ctl+"/v1/discovery?serviceId=inventory", discoveryToken, "")
	call("GET", "http://"+ctl+"/v1/discovery?serviceId=inventory", discoveryToken+"-wrong", "")
	for _, path := range []string{"/", "/healthz", "/readyz"} {
		call("GET", "http://"+ctl+path, "", "")
	}
	for _, path := range []string{"/petstore/pets", "/inventory/items", "/nowhere", "/debug/maps"} {
		call("GET", "http://"+gw+path, token, "")
	}
	for _, path := range []string{"/", "/readyz", "/debug/maps", "/debug/maps?map=instances", "/debug/runners", "/metrics",
		"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=2"} {
		call("GET", "http://"+adm+path, "", "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, auth := range []string{token + "-wrong", ""} {
		h := http.Header{}
		if auth != "" {
			h.Set("Authorization", "Bearer "+auth)
		}
		c, resp, err := websocket.Dial(ctx, "ws://"+ctl+"/ws/microservice", &websocket.DialOptions{HTTPHeader: h})
		if resp != nil {
			answers = append(answers, resp.Status)
		}
		if err != nil {
			answers = append(answers, err.Error())
			continue
		}
		_ = c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"service/register","params":{"token":"`+token+`-wrong","serviceId":"a","protocol":"http","address":"h","port":1}}`))
		_, msg, err := c.Read(ctx)
		answers = append(answers, string(msg), fmt.Sprint(err))
		c.CloseNow()
	}

	p.stop(syscall.SIGTERM, 30*time.Second)
	outputs := map[string]string{"stdout": strings.Join(p.output(), "\n"), "stderr": p.stderr.String(), "answers": strings.Join(answers, "\n")}
	if !strings.Contains(outputs["stderr"], "refused a token") || !strings.Contains(outputs["answers"], "not_registered") {
		t.Fatalf("the run did not go through refusals; stderr:\n%s\nanswers:\n%s", outputs["stderr"], outputs["answers"])
	}
	for name, text := range outputs {
		for _, secret := range []string{token, discoveryToken, token[len(token)-10:], discoveryToken[len(discoveryToken)-10:]} {
			if strings.Contains(text, secret) {
				i := strings.Index(text, secret)
				t.Errorf("%s shows a token (%q) near: %q", name, secret, text[max(0, i-200):min(len(text), i+50)])
			}
		}
	}
}
