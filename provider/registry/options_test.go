package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

func TestTokensNeverShow(t *testing.T) {
	opts := Options{Token: testToken, DiscoveryToken: testDiscToken}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	var outputs []string
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%10.3s"} {
		outputs = append(outputs,
			fmt.Sprintf(verb, opts), fmt.Sprintf(verb, &opts), fmt.Sprintf(verb, opts.Token),
			fmt.Sprintf(verb, r),
			fmt.Sprintf(verb, struct{ O Options }{opts}))
	}
	js, _ := json.Marshal(opts)
	outputs = append(outputs, string(js), opts.String())
	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewJSONHandler(&logs, nil), slog.NewTextHandler(&logs, nil)} {
		slog.New(h).Info("config", "options", opts, "token", opts.Token, "ptr", &opts)
	}
	outputs = append(outputs, logs.String())
	for _, out := range outputs {
		for _, secret := range []string{testToken, testDiscToken, fmt.Sprintf("%x", testToken), fmt.Sprintf("%x", testDiscToken)} {
			if strings.Contains(strings.ToLower(out), strings.ToLower(secret)) || strings.Contains(out, secret[:10]) {
				t.Errorf("output shows a token: %s", out)
			}
		}
	}
	if !strings.Contains(opts.String(), "[redacted]") || !strings.Contains(logs.String(), "[redacted]") {
		t.Errorf("masked outputs do not say [redacted]: %s / %s", opts.String(), logs.String())
	}
	if got := fmt.Sprint(Secret("")); got != "" {
		t.Errorf("empty Secret prints %q", got)
	}
}

func TestTokenFromEnv(t *testing.T) {
	t.Setenv("SWITCHYARD_TEST_TOKEN", "s3cret")
	if tok, err := TokenFromEnv("SWITCHYARD_TEST_TOKEN"); err != nil || string(tok) != "s3cret" {
		t.Errorf("TokenFromEnv = %v, %v", tok, err)
	}
	t.Setenv("SWITCHYARD_TEST_TOKEN", "")
	if _, err := TokenFromEnv("SWITCHYARD_TEST_TOKEN"); err == nil || !strings.Contains(err.Error(), "SWITCHYARD_TEST_TOKEN") {
		t.Errorf("empty variable: %v, want ErrNoToken naming it", err)
	}
}
